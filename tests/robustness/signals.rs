//! SIGINT and SIGTERM during an ingest, for real: the records read before the signal are
//! ingested, committed and durable, the summary and a line saying how to go on are printed, and
//! the exit status is 130 or 143; the store verifies and holds exactly those records, and the
//! same command run again goes on from there.

use crate::common;

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

fn record(i: usize) -> Vec<u8> {
    let line = serde_json::json!({
        "id": format!("d{i}"),
        "text": format!("第{i}篇文章的内容，讲述了一个关于数字{}的故事，内容各不相同。", i * 7919),
    });
    format!("{line}\n").into_bytes()
}

/// An ingest into `s.db` in `dir` reading a pipe that was given `n` records and stays open.
fn ingesting(dir: &std::path::Path, n: usize) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = common::fpdb()
        .current_dir(dir)
        .args(["--db", "s.db", "ingest", "--batch-size", "50", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..n {
        stdin.write_all(&record(i)).unwrap();
    }
    stdin.flush().unwrap();
    (child, stdin)
}

/// Ingest 300 records from a pipe, send `signal` (by the `kill` command) while the pipe is
/// still open, then one more record, which the reader reads after the signal and leaves.
fn interrupted(signal: &str, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let (child, mut stdin) = ingesting(dir.path(), 300);
    // The reader has taken the 300 records off the pipe long before this.
    std::thread::sleep(Duration::from_millis(1500));
    let kill = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    std::thread::sleep(Duration::from_millis(300));
    // Read after the signal: not ingested (the run may already have ended: a broken pipe).
    let _ = stdin.write_all(&record(300));
    let _ = stdin.flush();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "{err}");
    assert!(
        err.contains(&format!(
            "interrupted by SIG{signal}: the 300 records read before it are committed"
        )),
        "{err}"
    );
    assert!(err.contains("run the same command again"), "{err}");
    let v = common::run(dir.path(), &["--db", "s.db", "verify"]);
    assert_eq!(common::code(&v), 0, "{}", common::stderr(&v));
    assert_eq!(common::stored_ids(dir.path(), "s.db").len(), 300);
    // Going on: the same input again adds what was left.
    let all: Vec<u8> = (0..301).flat_map(record).collect();
    let again = common::run_stdin(dir.path(), &["--db", "s.db", "-q", "ingest", "-"], &all);
    assert_eq!(
        common::code(&again),
        0,
        "the records already stored are counted as such, a success: {}",
        common::stderr(&again)
    );
    assert_eq!(common::stored_ids(dir.path(), "s.db").len(), 301);
}

#[test]
fn sigint_commits_what_was_read_and_exits_130() {
    interrupted("INT", 130);
}

#[test]
fn sigterm_commits_what_was_read_and_exits_143() {
    interrupted("TERM", 143);
}

/// A second SIGINT while the run waits for its next record (a pipe left open): the run ends at
/// once, with one line saying so and status 130; what it committed before stays.
#[test]
fn a_second_sigint_ends_the_run_at_once_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (child, stdin) = ingesting(dir.path(), 100);
    std::thread::sleep(Duration::from_millis(1500));
    let kill = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
    };
    assert!(kill("-INT").success());
    // The first one waits for the next record, which never comes.
    std::thread::sleep(Duration::from_millis(500));
    assert!(kill("-INT").success());
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(
        err.matches("a second SIGINT: stopped at once").count(),
        1,
        "{err}"
    );
    let v = common::run(dir.path(), &["--db", "s.db", "verify"]);
    assert_eq!(common::code(&v), 0, "{}", common::stderr(&v));
}
