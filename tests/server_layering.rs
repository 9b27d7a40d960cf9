//! The server's files form layers: no file imports (directly or through
//! others) a file that imports it. `tools/server-deps` prints the graph;
//! this test fails when it finds a cycle.

use std::process::Command;

#[test]
fn the_server_files_import_each_other_without_a_cycle() {
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tools/server-deps"))
        .output()
        .expect("python3 runs tools/server-deps");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("progress: ")),
        "the graph names the progress loop:\n{text}"
    );
    assert!(
        out.status.success(),
        "import cycle between server files:\n{text}"
    );
}
