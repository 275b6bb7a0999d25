//! `mcp skills` against a server publishing two skills over HTTP (on a runtime of the test's
//! own): the list, one entry, a fetch written to a folder, and a fetch refused because the
//! server serves a file other than the one its entry lists.

use std::path::PathBuf;

use expect_test::expect;
use modelcontext::McpServer;
use modelcontext::server::Skill;
use modelcontext::server::middleware::{Next, Request, from_fn};
use serde_json::Value;

use super::{check_stdout, mcp};

const TAMPERED: &str = "skill://notes/scripts/count.sh";

/// The server and the runtime it runs on.
struct SkillServer {
    _runtime: tokio::runtime::Runtime,
    url: String,
}

fn skills() -> Vec<Skill> {
    let notes = Skill::new(
        "---\nname: notes\ndescription: Keep meeting notes in one format\nlicense: MIT\n---\n\
         Write notes as in templates/meeting.md.\n",
    )
    .and_then(|skill| skill.file("templates/meeting.md", "# Meeting\n\n## Decisions\n"))
    .and_then(|skill| skill.file("scripts/count.sh", "wc -l \"$1\"\n"))
    .expect("the notes skill");
    let refunds =
        Skill::new("---\nname: refunds\ndescription: Refund within 30 days\n---\nBe kind.\n")
            .and_then(|skill| skill.prefix("acme/billing"))
            .expect("the refunds skill");
    let other_refunds =
        Skill::new("---\nname: refunds\ndescription: Refunds of the shop\n---\nAsk first.\n")
            .and_then(|skill| skill.prefix("shop"))
            .expect("the shop's refunds skill");
    vec![notes, refunds, other_refunds]
}

impl SkillServer {
    /// Serves the skills; `tampered`: `resources/read` of one file answers other bytes of the
    /// same length, as a file changed on the way would.
    fn start(tampered: bool) -> SkillServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let url = runtime.block_on(async move {
            let mut server = McpServer::new("skills");
            for skill in skills() {
                server = server.skill(skill).expect("skill");
            }
            if tampered {
                server = server.middleware(from_fn(|request: Request, next: Next| async move {
                    let tamper = request.target() == Some(TAMPERED);
                    let response = next.run(request).await;
                    if !tamper {
                        return response;
                    }
                    response.map_result(|result: Value| {
                        let text = result.to_string().replace("wc -l", "rm -f");
                        serde_json::from_str(&text).expect("still JSON")
                    })
                }));
            }
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
            let endpoint = server.http_endpoint();
            tokio::spawn(async move { endpoint.serve(listener).await });
            url
        });
        SkillServer { _runtime: runtime, url }
    }
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-skills-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn skills_are_listed_and_shown() {
    let server = SkillServer::start(false);
    check_stdout(
        mcp(&["skills", &server.url]),
        expect![[r#"
            notes  skill://notes/SKILL.md
                Keep meeting notes in one format
            refunds  skill://acme/billing/refunds/SKILL.md
                Refund within 30 days
            refunds  skill://shop/refunds/SKILL.md
                Refunds of the shop
        "#]],
    );
    check_stdout(
        mcp(&["skills", "show", "notes", &server.url]),
        expect![[r#"
            notes  skill://notes/SKILL.md
                Keep meeting notes in one format
            front matter:
                license: MIT
            files:
                SKILL.md  119 bytes  sha256:df466f0729ed3598c51c499e4fe8b9864d51aa90a83f25ed1600f2187ea6c3be
                templates/meeting.md  24 bytes  sha256:43ea906b871d255d4c5932c18ee8510ef8e7b9d270ebbe693d62f4f79359b03f
                scripts/count.sh  11 bytes  sha256:fef95fec07679eff3b242919816fee4cc1b7d614719a50491895507fd7042983
        "#]],
    );
    let ambiguous = mcp(&["skills", "show", "refunds", &server.url]).code(64);
    assert_eq!(
        ambiguous.stderr,
        "mcp: 2 skills are named \"refunds\"; give one's URI instead: \
         skill://acme/billing/refunds/SKILL.md, skill://shop/refunds/SKILL.md\n\
         Run `mcp --help` for usage.\n"
    );
    check_stdout(
        mcp(&["skills", "show", "skill://shop/refunds/SKILL.md", &server.url]),
        expect![[r#"
            refunds  skill://shop/refunds/SKILL.md
                Refunds of the shop
            files:
                SKILL.md  66 bytes  sha256:f9e37cafb2fbfa3734894410e081e702ff371379b1b22bf72a69b25d0e02976f
        "#]],
    );
    let listed = mcp(&["skills", "--json", &server.url]).code(0).json();
    assert_eq!(listed["skills"][1]["uri"], "skill://acme/billing/refunds/SKILL.md");
    let missing = mcp(&["skills", "show", "nope", &server.url]).code(1);
    assert_eq!(
        missing.stderr,
        "mcp: the server lists no skill named \"nope\" (`mcp skills` lists them)\n"
    );
}

#[test]
fn a_fetched_skill_is_written_under_its_name() {
    let server = SkillServer::start(false);
    let dir = out_dir("fetch");
    let dir_arg = dir.display().to_string();
    let run = mcp(&["skills", "fetch", "notes", &dir_arg, &server.url]).code(0);
    let root = dir.join("notes");
    assert_eq!(
        run.stdout,
        format!("3 files of skill://notes/SKILL.md written to {}\n", root.display())
    );
    let read = |path: &str| std::fs::read_to_string(root.join(path)).expect(path);
    assert_eq!(read("templates/meeting.md"), "# Meeting\n\n## Decisions\n");
    assert_eq!(read("scripts/count.sh"), "wc -l \"$1\"\n");
    assert!(read("SKILL.md").starts_with("---\nname: notes\n"));
    std::fs::remove_dir_all(&root).expect("the first fetch removed");
    let json = mcp(&["--json", "skills", "fetch", "notes", &dir_arg, &server.url]).code(0).json();
    let expected = serde_json::json!({
        "skill": "skill://notes/SKILL.md",
        "dir": root.display().to_string(),
        "files": [
            {"path": "SKILL.md", "size": 119},
            {"path": "templates/meeting.md", "size": 24},
            {"path": "scripts/count.sh", "size": 11},
        ],
    });
    assert_eq!(json, expected);
    let again = mcp(&["skills", "fetch", "notes", &dir_arg, &server.url]).code(1);
    assert_eq!(
        again.stderr,
        format!(
            "mcp: {} already exists: remove it, or fetch into another folder\n",
            root.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_without_skills_says_so() {
    let run = super::stdio(&["skills"]).code(1);
    assert_eq!(
        run.stderr,
        "mcp: the server offers no skills: its capabilities do not declare the \
         io.modelcontextprotocol/skills extension\n"
    );
}

#[test]
fn a_file_that_fails_its_digest_check_is_refused_and_nothing_is_written() {
    let server = SkillServer::start(true);
    let dir = out_dir("tampered");
    let dir_arg = dir.display().to_string();
    let run = mcp(&["skills", "fetch", "notes", &dir_arg, &server.url]).code(1);
    assert_eq!(run.stdout, "");
    expect![[r#"
        mcp: skill refused, digest check failed: skill://notes/scripts/count.sh: digest sha256:35d4c52c2d9a61d8a49f3022a5d96e2b992de02e5f488e345456d2157df2d431, the skill's entry says sha256:fef95fec07679eff3b242919816fee4cc1b7d614719a50491895507fd7042983
    "#]].assert_eq(&run.stderr);
    assert!(!dir.exists(), "nothing is written when a check fails");
}
