// Drives `tackle serve` with the official TypeScript MCP SDK (run by crates/cli/tests/serve.rs).
// usage: node ts_client.cjs NODE_PREFIX TACKLE WORKDIR DATADIR; prints "ok" when every check passed.
const { createRequire } = require("node:module");
const path = require("node:path");

const [prefix, tackle, workdir, datadir] = process.argv.slice(2);
const sdk = createRequire(path.join(prefix, "node_modules", "x.js"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

async function main() {
  const transport = new StdioClientTransport({
    command: tackle,
    args: ["serve", "--data-dir", datadir, "--dir", workdir, "--ask", "allow-once"],
    cwd: workdir,
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name: "tackle-ts-test", version: "1.0.0" });
  await client.connect(transport);
  check(client.getServerVersion().name === "tackle", "server name");
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const needed of ["bash", "read", "edit", "write", "grep", "glob"]) {
    check(names.includes(needed), `lists ${needed}`);
  }
  const read = await client.callTool({ name: "read", arguments: { path: "hello.txt" } });
  check(!read.isError && read.content[0].text.includes("1: hello world"), "read");
  // grep has an output schema: the SDK validates structuredContent against it.
  const grep = await client.callTool({ name: "grep", arguments: { pattern: "hello" } });
  check(!grep.isError && grep.structuredContent !== undefined, "grep structured");
  const bash = await client.callTool({ name: "bash", arguments: { command: "echo from-ts" } });
  check(!bash.isError && bash.content[0].text.includes("from-ts"), "bash");
  const bad = await client.callTool({ name: "read", arguments: {} });
  check(bad.isError === true, "bad input is isError");
  const unknown = await client.callTool({ name: "nope", arguments: {} });
  check(unknown.isError === true && unknown.content[0].text.includes("Unknown tool"), "unknown");
  await client.close();
  console.log("ok");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
