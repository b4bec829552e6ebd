//! Local targets: a loopback or private address that [`WebAccess`] does not allow is a
//! permission question (`webfetch` on the URL's origin, asked every time), so a developer can
//! fetch their own dev server and nothing local is reached by surprise. Link-local addresses
//! (cloud metadata endpoints), the AWS IPv6 metadata address and other reserved ranges are
//! never reached.

use std::net::IpAddr;
use std::sync::Arc;

use reqwest::Client;
use tackle_tool_core::{Defect, ToolError};
use url::{Host, Url};

use super::guard::{Blocked, GuardedResolver, WebAccess, askable};

/// Where a URL's host leads.
#[derive(Debug)]
pub(crate) enum Target {
    /// Reachable as the policy stands (public, or allowed).
    Reachable,
    /// Only local addresses, all askable: reachable once the user says so.
    Local(Vec<IpAddr>),
}

/// Classifies `url`'s host under `access`; `Err` when it leads only to addresses webfetch
/// never reaches.
pub(crate) async fn classify(access: &WebAccess, url: &Url) -> Result<Target, String> {
    let host = url.host().ok_or_else(|| "the URL has no host".to_owned())?;
    let (shown, addrs): (String, Vec<IpAddr>) = match host {
        Host::Ipv4(v4) => (v4.to_string(), vec![IpAddr::V4(v4)]),
        Host::Ipv6(v6) => (v6.to_string(), vec![IpAddr::V6(v6)]),
        Host::Domain(name) => {
            if access.allows_host(name) {
                return Ok(Target::Reachable);
            }
            let port = url.port_or_known_default().unwrap_or(80);
            match tokio::net::lookup_host((name, port)).await {
                Ok(found) => (name.to_owned(), found.map(|a| a.ip()).collect()),
                // The request reports the failure (its resolver decides again).
                Err(_) => return Ok(Target::Reachable),
            }
        }
    };
    // The guarded resolver keeps the allowed addresses of a name and drops the rest.
    if addrs.is_empty() || addrs.iter().any(|addr| access.allows_addr(*addr)) {
        return Ok(Target::Reachable);
    }
    if let Some(never) = addrs.iter().find(|addr| !askable(**addr)) {
        return Err(Blocked::new(&shown, *never).to_string());
    }
    Ok(Target::Local(addrs))
}

/// WF1: only http and https.
pub(crate) fn check_scheme(url: &Url) -> Result<(), String> {
    if matches!(url.scheme(), "http" | "https") {
        Ok(())
    } else {
        Err(format!(
            "only http:// and https:// URLs can be fetched, not {}:",
            url.scheme()
        ))
    }
}

/// `url`'s origin (`http://localhost:3000`), the resource a local fetch asks for.
pub(crate) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// `access` with exactly `addrs` added: what one approved local fetch may reach.
pub(crate) fn widened(access: &WebAccess, addrs: &[IpAddr]) -> WebAccess {
    let mut access = access.clone();
    for addr in addrs {
        // An address always parses as an entry.
        let _ = access.allow(&addr.to_string());
    }
    access
}

/// A client whose resolver and connections follow `access`.
pub(crate) fn client(access: &Arc<WebAccess>) -> Result<Client, ToolError> {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve names itself, around the guard.
        .no_proxy()
        .dns_resolver(Arc::new(GuardedResolver {
            access: Arc::clone(access),
        }))
        .build()
        .map_err(|err| Defect::with_source("cannot build the HTTP client", err).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_private_are_askable_metadata_is_not() {
        for yes in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.9",
            "172.16.0.1",
            "::1",
            "fd12::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(askable(yes.parse().unwrap()), "{yes}");
        }
        for no in [
            "169.254.169.254",
            "fe80::1",
            "fd00:ec2::254",
            "100.100.100.200",
            "0.0.0.0",
            "224.0.0.1",
            "8.8.8.8",
        ] {
            assert!(!askable(no.parse().unwrap()), "{no}");
        }
    }

    /// The messages of `err` and every error beneath it.
    fn chain(err: &(dyn std::error::Error + 'static)) -> String {
        let mut out = err.to_string();
        let mut source = err.source();
        while let Some(next) = source {
            out.push_str(": ");
            out.push_str(&next.to_string());
            source = next.source();
        }
        out
    }

    /// DNS rebinding: the approval is for the addresses the name stood for when the user was
    /// asked. When the name resolves elsewhere at connect (here `localhost` is 127.0.0.1
    /// while 127.0.0.2 was approved), the connection is refused before it is made.
    #[tokio::test]
    async fn an_approval_reaches_only_the_addresses_asked_about() {
        use std::io::{Read, Write};

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://localhost:{port}/");
        let approved = Arc::new(widened(&WebAccess::new(), &["127.0.0.2".parse().unwrap()]));
        let err = client(&approved)
            .unwrap()
            .get(&url)
            .send()
            .await
            .unwrap_err();
        let message = chain(&err);
        assert!(
            message.contains("localhost resolves to 127.0.0.1, a loopback address"),
            "{message}"
        );
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "a connection reached the listener"
        );

        // The address asked about is reached.
        listener.set_nonblocking(false).unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request).unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                .unwrap();
        });
        let asked = Arc::new(widened(&WebAccess::new(), &["127.0.0.1".parse().unwrap()]));
        let response = client(&asked).unwrap().get(&url).send().await.unwrap();
        assert_eq!(response.text().await.unwrap(), "ok");
        server.join().unwrap();
    }
}
