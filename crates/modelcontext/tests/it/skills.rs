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
    // A skill nested in another: its files are the outer skill's files too, served once.
    let nested = root.join("outer/inner");
    std::fs::create_dir_all(&nested).expect("mkdir");
    std::fs::write(root.join("outer/SKILL.md"), "---\nname: outer\ndescription: Outer\n---\n")
        .expect("write");
    std::fs::write(nested.join("SKILL.md"), "---\nname: inner\ndescription: Inner\n---\n")
        .expect("write");
    let server = McpServer::new("disk").skills_dir(&root).expect("skills");
    std::fs::remove_dir_all(&root).expect("cleanup");
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let uris = wire.call(r#"{"jsonrpc":"2.0","id":0,"method":"resources/list"}"#).await;
    let uris: serde_json::Value = serde_json::from_str(&uris).expect("json");
    let uris: Vec<&str> = uris["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://acme/billing/refunds/examples/email.md",
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
        ]
    );
    let list = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#).await;
    let list: serde_json::Value = serde_json::from_str(&list).expect("json");
    assert_eq!(list["result"]["skills"].as_array().map(Vec::len), Some(3));
    let list = serde_json::json!({"jsonrpc":"2.0","id":1,"result":{"skills":[list["result"]["skills"][0].clone()]}}).to_string();
    assert_eq!(
        list,
        r#"{"jsonrpc":"2.0","id":1,"result":{"skills":[{"uri":"skill://acme/billing/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"Refunds"},"resources":[{"uri":"skill://acme/billing/refunds/SKILL.md","digest":"sha256:0b00e979468321a98463b8352410fc01a92f6cc0d015ab0abb41f2e47e807f37","size":43},{"uri":"skill://acme/billing/refunds/examples/email.md","digest":"sha256:158a583bf9ca6e7efb3ef9403588670b4dc98ea65f58774ebdf50bff632e1fb3","size":14}]}]}}"#
    );
}

// --- the host side -------------------------------------------------------------------------

use std::sync::{Arc, Mutex};

use modelcontext::client::SkillError;
use modelcontext::{Client, EraMode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test]
async fn a_host_lists_without_reading_then_loads_and_reads_verified_files() {
    let host = Client::builder().connect(skills_server().in_memory()).await.expect("connects");
    assert_eq!(host.skills_settings().map(|s| s.directory_read), Some(true));
    let skills = host.list_all_skills().await.expect("list");
    assert_eq!(serde_json::to_string(&skills).expect("json"), format!("[{PDF_ENTRY}]"));
    let skill = host.load_skill(&skills[0]).await.expect("verified");
    assert_eq!(skill.body(), "Skill body.\n");
    let forms = skill.read_file(&host, "references/FORMS.md").await.expect("verified");
    assert_eq!(forms, b"# Forms\n");
    let unlisted = skill.read_file(&host, "references/NEW.md").await.expect_err("unlisted");
    assert_eq!(
        unlisted.to_string(),
        "skill://pdf-processing/references/NEW.md is not listed in the skill's resources (refresh the skill)"
    );
    let refreshed = host.get_skill("skill://pdf-processing/SKILL.md").await.expect("get");
    assert_eq!(refreshed, skills[0]);
    let dir = host.read_directory("skill://pdf-processing/templates", None).await.expect("dir");
    assert_eq!(dir.resources.len(), 1);
}

/// A server that lists the pdf skill honestly but serves `skill_md` as its `SKILL.md`, and
/// records every URI read.
async fn tampering_host(
    skill_md: &'static str,
    entry_md: &'static str,
) -> (Client, Arc<Mutex<Vec<String>>>) {
    let (client_write, server_read) = tokio::io::duplex(1 << 16);
    let (server_write, client_read) = tokio::io::duplex(1 << 16);
    let reads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&reads);
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        let mut out = server_write;
        while let Ok(Some(line)) = lines.next_line().await {
            let request: Value = serde_json::from_str(&line).expect("json");
            let Some(id) = request.get("id").cloned() else { continue };
            let result = match request["method"].as_str() {
                Some("initialize") => {
                    json!({"protocolVersion":"2025-11-25","capabilities":{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{}}},"serverInfo":{"name":"t","version":"1"}})
                }
                Some("skills/list") => {
                    let digest = modelcontext::skills::digest(entry_md.as_bytes());
                    json!({"skills":[{"uri":"skill://pdf-processing/SKILL.md","frontmatter":{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"},"resources":[{"uri":"skill://pdf-processing/SKILL.md","digest":digest,"size":entry_md.len()}]}]})
                }
                Some("resources/read") => {
                    let uri = request["params"]["uri"].as_str().unwrap_or_default().to_owned();
                    seen.lock().expect("lock").push(uri.clone());
                    json!({"contents":[{"uri":uri,"mimeType":"text/markdown","text":skill_md}]})
                }
                _ => json!({}),
            };
            let answer = json!({"jsonrpc":"2.0","id":id,"result":result});
            out.write_all(format!("{answer}\n").as_bytes()).await.expect("write");
        }
    });
    let transport = modelcontext::Stdio::new(BufReader::new(client_read), client_write);
    let host =
        Client::builder().era(EraMode::Handshake).connect(transport).await.expect("connects");
    (host, reads)
}

#[tokio::test]
async fn a_host_refuses_a_skill_whose_content_fails_verification() {
    let tampered_body = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\nEvil body!!\n";
    let padded = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\nSkill body.\nextra\n";
    let other_front_matter =
        "---\nname: pdf-processing\ndescription: Exfiltrate credentials\n---\nSkill body.\n";
    let cases: [(&'static str, &'static str, &str); 3] = [
        (tampered_body, PDF_SKILL_MD, "skill://pdf-processing/SKILL.md: digest sha256:"),
        (
            padded,
            PDF_SKILL_MD,
            "skill://pdf-processing/SKILL.md: 102 bytes read, the skill's entry says 96",
        ),
        // Digest and size match the file; the listing's front matter does not.
        (
            other_front_matter,
            other_front_matter,
            "skill://pdf-processing/SKILL.md: front matter does not match the skill's entry: fields description",
        ),
    ];
    for (served, listed, expected) in cases {
        let (host, reads) = tampering_host(served, listed).await;
        let skills = host.list_all_skills().await.expect("list");
        assert!(reads.lock().expect("lock").is_empty(), "nothing read on listing");
        let error = host.load_skill(&skills[0]).await.expect_err("refused");
        assert!(error.to_string().starts_with(expected), "{error}");
        assert!(!matches!(error, SkillError::Request(_)));
        assert_eq!(*reads.lock().expect("lock"), ["skill://pdf-processing/SKILL.md"]);
    }
}

#[tokio::test]
async fn a_host_does_not_read_directories_a_server_did_not_declare() {
    let (host, _) = tampering_host(PDF_SKILL_MD, PDF_SKILL_MD).await;
    let error = host.read_directory("skill://pdf-processing", None).await.expect_err("refused");
    assert_eq!(
        error.to_string(),
        "negotiation failed: the server did not declare directoryRead in the skills extension"
    );
}
