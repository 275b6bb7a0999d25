//! Skills (`io.modelcontextprotocol/skills`) in the inspector: the server's list, and a
//! skill's `SKILL.md` and files, each read and verified against its entry as a host would
//! before using it.

use axum::extract::{Json, State};
use modelcontext::client::SkillError;
use modelcontext::types::SkillEntry;
use serde::Deserialize;
use serde_json::json;

use super::api::{Answer, ApiError, Ui, sdk};
use crate::failure::Failure;

/// `POST /api/skills`: `{"skills": [entry...]}`, every page.
pub async fn list(State(session): Ui) -> Answer {
    let client = session.client()?;
    let skills = client.list_all_skills().await.map_err(sdk)?;
    Ok(Json(json!({"skills": skills})))
}

#[derive(Deserialize)]
pub struct ReadRequest {
    /// The entry as listed: what the reads are verified against.
    entry: SkillEntry,
    /// One of its files (a URI the entry lists); its `SKILL.md` when absent.
    #[serde(default)]
    file: Option<String>,
}

/// `POST /api/skill`: the skill's `SKILL.md` (`{"uri", "text"}`), or one of its files
/// (`{"uri", "text"}` for UTF-8, `{"uri", "size"}` for other bytes). A file that fails its
/// check is an error, never shown.
pub async fn read(State(session): Ui, Json(request): Json<ReadRequest>) -> Answer {
    let client = session.client()?;
    let loaded = client.load_skill(&request.entry).await.map_err(refused)?;
    let Some(file) = request.file else {
        return Ok(Json(json!({"uri": loaded.entry.uri, "text": loaded.skill_md})));
    };
    let bytes = loaded.read_file(&client, &file).await.map_err(refused)?;
    Ok(Json(match String::from_utf8(bytes) {
        Ok(text) => json!({"uri": file, "text": text}),
        Err(binary) => json!({"uri": file, "size": binary.as_bytes().len()}),
    }))
}

/// A skill the client would not use, as the page's error.
fn refused(err: SkillError) -> ApiError {
    match err {
        SkillError::Request(err) => sdk(err),
        // The server's content is not what its entry promised: its fault, not the page's.
        other => Failure::BadAnswer(other.to_string()).into(),
    }
}
