//! Pagination of the four list methods (spec `server/utilities/pagination`).
//!
//! Lists come in registration order, so pages are deterministic. A cursor is the offset of
//! the next page sealed with the server's keys for one list kind ([`super::seal`]): the client
//! cannot forge one, alter one, or use a `tools/list` cursor on `prompts/list`. Anything else
//! is -32602 `Invalid cursor`. Without [`McpServer::page_size`](super::McpServer::page_size)
//! every list is one page, as most clients expect.

use modelcontext_types::McpError;

use super::seal::KeyRing;

/// One page of `items` starting at `cursor`, and the cursor of the next page if there is one.
pub(crate) fn page<I: Iterator>(
    keys: &KeyRing,
    page_size: Option<usize>,
    kind: &str,
    cursor: Option<&str>,
    items: I,
) -> Result<(Vec<I::Item>, Option<String>), McpError> {
    let domain = format!("cursor/{kind}");
    let start = match cursor {
        None => 0,
        Some(cursor) => open(keys, &domain, cursor).ok_or_else(invalid_cursor)?,
    };
    let Some(size) = page_size else {
        return Ok((items.skip(start).collect(), None));
    };
    let mut rest = items.skip(start).peekable();
    let page: Vec<I::Item> = rest.by_ref().take(size).collect();
    let next = rest.peek().is_some().then(|| {
        let offset = start + page.len();
        keys.seal(&domain, offset.to_string().as_bytes())
    });
    Ok((page, next))
}

fn open(keys: &KeyRing, domain: &str, cursor: &str) -> Option<usize> {
    let payload = keys.open(domain, cursor)?;
    std::str::from_utf8(&payload).ok()?.parse().ok()
}

fn invalid_cursor() -> McpError {
    McpError::invalid_params("Invalid cursor")
}
