//! Lists that come in pages: every page fetched, following `nextCursor`.

use crate::failure::Failure;

/// Every page of a list, following `nextCursor`.
pub async fn all_pages<P, T, F, Fut>(
    mut fetch: F,
    split: impl Fn(P) -> (Vec<T>, Option<String>),
) -> Result<Vec<T>, Failure>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<P, modelcontext::Error>>,
{
    let mut items = Vec::new();
    let mut cursor = None;
    loop {
        let (page, next) = split(fetch(cursor).await.map_err(Failure::from_sdk)?);
        items.extend(page);
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(items),
        }
    }
}
