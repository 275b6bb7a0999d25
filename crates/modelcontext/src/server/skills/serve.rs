//! `skills/get` and `resources/directory/read` over the published skills (`skills/list` is a
//! plain page of their entries, in `call.rs` beside the other lists).

use std::collections::BTreeMap;

use modelcontext_types::{
    DIRECTORY_MIME_TYPE, GetSkillResult, McpError, Resource, SKILL_SCHEME, SkillFiles,
};

use crate::server::Catalog;

/// The entry of the skill whose `SKILL.md` is at `uri`; -32602 for any other URI, as the
/// extension requires.
pub(crate) fn get(catalog: &Catalog, uri: &str) -> Result<GetSkillResult, McpError> {
    match catalog.skills.get(uri) {
        Some(skill) => Ok(GetSkillResult::new(skill.entry.clone())),
        None => Err(McpError::invalid_params(format!("No skill is served at {uri}"))),
    }
}

/// The direct children of the directory `uri` within the skills' namespace, files with their
/// resource metadata and subdirectories as directory resources, in name order; -32602 when
/// `uri` is no such directory (a file, or nothing).
pub(crate) fn children(catalog: &Catalog, uri: &str) -> Result<Vec<Resource>, McpError> {
    let not_a_directory =
        || McpError::invalid_params(format!("{uri} is not a directory this server serves"));
    if !uri.starts_with(SKILL_SCHEME) || uri.ends_with('/') {
        return Err(not_a_directory());
    }
    let inside = format!("{uri}/");
    // BTreeMap: one entry per child name (several files share a subdirectory), sorted.
    let mut children: BTreeMap<String, Resource> = BTreeMap::new();
    for file in skill_files(catalog).filter_map(|f| f.strip_prefix(&inside)) {
        let (name, is_dir) = match file.split_once('/') {
            Some((dir, _)) => (dir, true),
            None => (file, false),
        };
        let child_uri = format!("{inside}{name}");
        let child = if is_dir {
            Resource::new(&child_uri, name).with_mime_type(DIRECTORY_MIME_TYPE)
        } else {
            match catalog.resources.get(&child_uri) {
                Some(def) => def.to_resource(),
                None => Resource::new(&child_uri, name),
            }
        };
        children.entry(name.to_owned()).or_insert(child);
    }
    if children.is_empty() {
        return Err(not_a_directory());
    }
    Ok(children.into_values().collect())
}

/// The URI of every file of every published skill.
fn skill_files(catalog: &Catalog) -> impl Iterator<Item = &str> {
    catalog.skills.iter().flat_map(|skill| match &skill.entry.resources {
        SkillFiles::Listed(files) => files.iter().map(|f| f.uri.as_str()).collect::<Vec<_>>(),
        _ => Vec::new(),
    })
}
