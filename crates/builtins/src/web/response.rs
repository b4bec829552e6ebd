//! What webfetch and websearch do with a response: the content types fetched, a capped body,
//! request errors said without their URL.

use reqwest::Response;

use super::guard::Blocked;

/// WF4: only textual content is fetched.
pub fn check_content_type(content_type: &str) -> Result<(), String> {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if mime.starts_with("image/") && mime != "image/svg+xml" && mime != "image/vnd.fastbidsheet" {
        return Err(format!("unsupported fetched image content type {mime}"));
    }
    let textual = mime.is_empty()
        || mime.starts_with("text/")
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime == "application/xml"
        || mime.ends_with("+xml")
        || mime == "application/javascript"
        || mime == "application/x-javascript";
    if textual {
        Ok(())
    } else {
        Err(format!(
            "unsupported content type {mime}: only text, HTML, Markdown, JSON and XML can be fetched"
        ))
    }
}

/// Streams at most `cap` bytes of the body; true when more was there (and was not read).
pub(crate) async fn read_capped(
    response: &mut Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let declared = response
        .content_length()
        .and_then(|len| usize::try_from(len).ok());
    let mut body = Vec::with_capacity(declared.unwrap_or(0).min(cap));
    while let Some(chunk) = response.chunk().await? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// A request error without its URL (which may carry credentials), with the guard's reason
/// when the guard refused the connection.
pub(crate) fn request_detail(err: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        if let Some(blocked) = current.downcast_ref::<Blocked>() {
            return blocked.to_string();
        }
        source = current.source();
    }
    if err.is_timeout() {
        return "the request timed out".to_owned();
    }
    if err.is_connect() {
        return format!("cannot connect: {}", innermost(err));
    }
    format!("the request failed: {}", innermost(err))
}

/// The innermost message of an error chain (hyper and io errors, never the URL).
pub(crate) fn innermost(err: &reqwest::Error) -> String {
    let mut current: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = current.source() {
        current = next;
    }
    if std::ptr::addr_eq(current, err as &(dyn std::error::Error + 'static)) {
        // No source: reqwest's own text, without the URL.
        return err
            .to_string()
            .split(" for url (")
            .next()
            .unwrap_or_default()
            .to_owned();
    }
    current.to_string()
}
