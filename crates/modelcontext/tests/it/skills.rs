//! The skills extension (SEP-2640) on the wire: the declaration, `skills/list`, `skills/get`,
//! `resources/directory/read`, the skill files as resources, and the errors the extension
//! names; then a host loading skills with verification.

use modelcontext::McpServer;
use modelcontext::server::Skill;

use crate::support::{Wire, modern_meta};

const PDF_SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\nSkill body.\n";

fn pdf_skill() -> Skill {
    Skill::new(PDF_SKILL_MD)
        .and_then(|s| s.file("references/FORMS.md", "# Forms\n"))
        .and_then(|s| s.file("templates/invoice.md", "Invoice {{n}}\n"))
        .expect("skill")
}

fn skills_server() -> McpServer {
    McpServer::new("Skills").skill(pdf_skill()).expect("skill")
}

const PDF_ENTRY: &str = r#"{"uri":"skill://pdf-processing/SKILL.md","frontmatter":{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"},"resources":[{"uri":"skill://pdf-processing/SKILL.md","digest":"sha256:cd8e5ee3edd7a6da845370a8085a25cd6f0b4952d9a06cf2c3adcea75982d5f0","size":96},{"uri":"skill://pdf-processing/references/FORMS.md","digest":"sha256:111198a69a324efe68bb9dd7e0ca9cb2e50e1c374da3d383a7d3569824965082","size":8},{"uri":"skill://pdf-processing/templates/invoice.md","digest":"sha256:a9876ce7bc510cccb690c5c88ab3304e344339d3570b7b451e5de79bb7643733","size":14}]}"#;

#[tokio::test]
async fn a_published_skill_declares_the_extension_with_directory_reads() {
    let mut wire = Wire::start(skills_server(), "2025-11-25");
    let answer = wire.call(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}"#).await;
    assert!(
        answer.contains(r#""capabilities":{"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true}},"logging":{},"resources":{"subscribe":true,"listChanged":true}}"#),
        "{answer}"
    );
}

#[tokio::test]
async fn skills_list_and_get_answer_the_entry_with_digests_and_sizes() {
    let mut wire = Wire::start(skills_server(), "2025-11-25");
    wire.initialize().await;
    let list = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#).await;
    assert_eq!(list, format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"skills":[{PDF_ENTRY}]}}}}"#));
    let get = wire
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://pdf-processing/SKILL.md"}}"#)
        .await;
    assert_eq!(get, format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"skill":{PDF_ENTRY}}}}}"#));
    let unknown = wire
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://nothing/SKILL.md"}}"#)
        .await;
    assert_eq!(
        unknown,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"No skill is served at skill://nothing/SKILL.md"}}"#
    );
}

#[tokio::test]
async fn modern_skill_results_carry_the_caching_attributes() {
    let mut wire = Wire::start(skills_server(), "2026-07-28");
    let meta = modern_meta("{}", "");
    let list = wire
        .call(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{{{meta}}}}}"#))
        .await;
    assert_eq!(
        list,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"Skills","version":"0.1.0"}}}},"resultType":"complete","skills":[{PDF_ENTRY}],"ttlMs":0,"cacheScope":"private"}}}}"#
        )
    );
    let get = wire.call(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{{"uri":"skill://pdf-processing/SKILL.md",{meta}}}}}"#)).await;
    assert_eq!(
        get,
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"Skills","version":"0.1.0"}}}},"resultType":"complete","skill":{PDF_ENTRY},"ttlMs":0,"cacheScope":"private"}}}}"#
        )
    );
}

#[tokio::test]
async fn skill_files_are_resources_and_skill_md_carries_the_front_matter() {
    let mut wire = Wire::start(skills_server(), "2025-11-25");
    wire.initialize().await;
    let list = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#).await;
    assert_eq!(
        list,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"skill://pdf-processing/SKILL.md","name":"pdf-processing","description":"Extract, fill, and assemble PDF documents","mimeType":"text/markdown","size":96},{"uri":"skill://pdf-processing/references/FORMS.md","name":"FORMS.md","mimeType":"text/markdown","size":8},{"uri":"skill://pdf-processing/templates/invoice.md","name":"invoice.md","mimeType":"text/markdown","size":14}]}}"#
    );
    let read = wire
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://pdf-processing/references/FORMS.md"}}"#)
        .await;
    assert_eq!(
        read,
        r##"{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"skill://pdf-processing/references/FORMS.md","mimeType":"text/markdown","text":"# Forms\n"}]}}"##
    );
}

#[tokio::test]
async fn directory_reads_list_direct_children_and_refuse_what_is_not_a_directory() {
    let mut wire = Wire::start(skills_server(), "2025-11-25");
    wire.initialize().await;
    let root = wire
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://pdf-processing"}}"#)
        .await;
    assert_eq!(
        root,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"skill://pdf-processing/SKILL.md","name":"pdf-processing","description":"Extract, fill, and assemble PDF documents","mimeType":"text/markdown","size":96},{"uri":"skill://pdf-processing/references","name":"references","mimeType":"inode/directory"},{"uri":"skill://pdf-processing/templates","name":"templates","mimeType":"inode/directory"}]}}"#
    );
    let sub = wire
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"resources/directory/read","params":{"uri":"skill://pdf-processing/templates"}}"#)
        .await;
    assert_eq!(
        sub,
        r#"{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"skill://pdf-processing/templates/invoice.md","name":"invoice.md","mimeType":"text/markdown","size":14}]}}"#
    );
    for (id, uri) in
        [(3, "skill://pdf-processing/SKILL.md"), (4, "skill://nowhere"), (5, "file:///etc")]
    {
        let refused = wire
            .call(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/directory/read","params":{{"uri":"{uri}"}}}}"#))
            .await;
        assert_eq!(
            refused,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"{uri} is not a directory this server serves"}}}}"#
            )
        );
    }
}

#[tokio::test]
async fn skills_and_directories_are_paginated() {
    let second = Skill::new("---\nname: git-workflow\ndescription: Our Git conventions\n---\n")
        .and_then(|s| s.prefix("acme/dev"))
        .expect("skill");
    let server = skills_server().skill(second).expect("skill").page_size(1);
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let first = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#).await;
    let first: serde_json::Value = serde_json::from_str(&first).expect("json");
    assert_eq!(first["result"]["skills"].as_array().map(Vec::len), Some(1));
    let cursor = first["result"]["nextCursor"].as_str().expect("a next page");
    let next = wire
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{{"cursor":"{cursor}"}}}}"#
        ))
        .await;
    assert_eq!(
        next,
        r#"{"jsonrpc":"2.0","id":2,"result":{"skills":[{"uri":"skill://acme/dev/git-workflow/SKILL.md","frontmatter":{"name":"git-workflow","description":"Our Git conventions"},"resources":[{"uri":"skill://acme/dev/git-workflow/SKILL.md","digest":"sha256:3a79b1d014808ab1d6634d71c6b552115da51d2ec703bd7be688801e2531cfad","size":60}]}]}}"#
    );
    let dir = wire
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"resources/directory/read","params":{"uri":"skill://pdf-processing"}}"#)
        .await;
    let dir: serde_json::Value = serde_json::from_str(&dir).expect("json");
    let cursor = dir["result"]["nextCursor"].as_str().expect("a next page");
    let rest = wire
        .call(&format!(r#"{{"jsonrpc":"2.0","id":4,"method":"resources/directory/read","params":{{"uri":"skill://pdf-processing","cursor":"{cursor}"}}}}"#))
        .await;
    assert!(rest.contains(r#""uri":"skill://pdf-processing/references""#), "{rest}");
}

#[test]
fn skills_that_break_the_rules_are_refused_at_registration() {
    let cases = [
        ("---\nname: Bad_Name\ndescription: x\n---\n", "skill name 'Bad_Name'"),
        ("---\nname: ok\n---\n", "skill 'ok': SKILL.md front matter has no `description`"),
        ("no front matter", "SKILL.md front matter: the file does not begin with a `---` line"),
    ];
    for (skill_md, expected) in cases {
        let error = Skill::new(skill_md).expect_err(expected).to_string();
        assert!(error.contains(expected), "{error}");
    }
    let skill = Skill::new("---\nname: ok\ndescription: x\n---\n").expect("skill");
    assert!(skill.clone().file("../escape.md", "x").is_err());
    assert!(skill.file("SKILL.md", "x").is_err());
    let twice = McpServer::new("s").skill(pdf_skill()).expect("once").skill(pdf_skill());
    assert!(twice.is_err());
}

#[tokio::test]
async fn a_skills_directory_publishes_each_skill_with_its_files_and_prefix() {
    let root = std::env::temp_dir().join(format!("mc-skills-{}", std::process::id()));
    let skill = root.join("acme/billing/refunds");
    std::fs::create_dir_all(skill.join("examples")).expect("mkdir");
    std::fs::create_dir_all(skill.join(".git")).expect("mkdir");
    std::fs::write(skill.join("SKILL.md"), "---\nname: refunds\ndescription: Refunds\n---\n")
        .expect("write");
    std::fs::write(skill.join("examples/email.md"), "Dear customer\n").expect("write");
    std::fs::write(skill.join(".git/HEAD"), "hidden\n").expect("write");
    let server = McpServer::new("disk").skills_dir(&root).expect("skills");
    std::fs::remove_dir_all(&root).expect("cleanup");
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let list = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#).await;
    assert_eq!(
        list,
        r#"{"jsonrpc":"2.0","id":1,"result":{"skills":[{"uri":"skill://acme/billing/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"Refunds"},"resources":[{"uri":"skill://acme/billing/refunds/SKILL.md","digest":"sha256:0b00e979468321a98463b8352410fc01a92f6cc0d015ab0abb41f2e47e807f37","size":43},{"uri":"skill://acme/billing/refunds/examples/email.md","digest":"sha256:158a583bf9ca6e7efb3ef9403588670b4dc98ea65f58774ebdf50bff632e1fb3","size":14}]}]}}"#
    );
}
