//! A full disk, for real: the store lives on a small tmpfs mounted by the test (needs root and
//! permission to mount; otherwise the test says so on stderr and checks nothing).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{code, json_lines, stderr, stdout};

/// A tmpfs mounted for the test's life.
struct Mount(PathBuf);

impl Mount {
    fn new(at: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(at).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .ok()?
            .success();
        ok.then(|| Mount(at.to_path_buf()))
    }

    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount {}", self.0.display());
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn ids(out: &str) -> Vec<String> {
    json_lines(out)
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_full_disk_stops_the_ingest_cleanly_and_loses_nothing_acknowledged() {
    let fpdb =
        |dir: &Path, args: &[&str]| common::fpdb().current_dir(dir).args(args).output().unwrap();
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let Some(mnt) = Mount::new(&p.join("mnt"), "6m") else {
        eprintln!("full_disk: SKIPPED (mounting a tmpfs needs root and CAP_SYS_ADMIN)");
        return;
    };
    let mut rng = common::Rng(77);
    let mut body = String::new();
    let n = 40_000;
    for i in 0..n {
        let text = common::synthetic_doc(&mut rng, 3);
        body.push_str(&serde_json::json!({"id": format!("d{i}"), "text": text}).to_string());
        body.push('\n');
    }
    std::fs::write(p.join("in.jsonl"), body).unwrap();
    let store = "mnt/store";
    let o = fpdb(
        p,
        &[
            "ingest",
            "in.jsonl",
            "--db",
            store,
            "--output",
            "out.jsonl",
            "-q",
        ],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains(store), "names the store: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let acked = ids(&std::fs::read_to_string(p.join("out.jsonl")).unwrap());
    assert!(
        !acked.is_empty() && acked.len() < n,
        "{} acknowledged",
        acked.len()
    );

    // Space freed: the store opens, verifies and holds every acknowledged document.
    mnt.resize("256m");
    let o = fpdb(p, &["verify", "--db", store]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let stored = ids(&stdout(&fpdb(p, &["export", "--db", store])));
    let set: std::collections::HashSet<&String> = stored.iter().collect();
    let lost: Vec<&String> = acked.iter().filter(|i| !set.contains(i)).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged documents lost",
        lost.len()
    );

    // The same command resumes: the stored documents are already stored (a success), the
    // rest added.
    let o = fpdb(p, &["ingest", "in.jsonl", "--db", store, "-q"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
    let o = fpdb(p, &["verify", "--db", store, "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json_lines(&stdout(&o))[0]["documents"], n as u64);
}

/// The server on a disk that fills: the request that meets it is answered with the error and
/// how many of its documents were written, the next ones with the error (none waits for
/// ever), reads go on, and every document acknowledged, or named as written, is stored.
#[test]
fn a_full_disk_fails_the_servers_writes_cleanly_and_loses_nothing_acknowledged() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let Some(mnt) = Mount::new(&p.join("mnt"), "6m") else {
        eprintln!("full_disk: SKIPPED (mounting a tmpfs needs root and CAP_SYS_ADMIN)");
        return;
    };
    let store = "mnt/store";
    let server = common::server::Server::start(p, store, &["-q"]);
    let mut rng = common::Rng(78);
    let (mut acked, mut failed) = (Vec::new(), 0);
    let mut at = 0;
    while failed < 3 {
        assert!(at < 200_000, "the disk never filled");
        let docs: Vec<serde_json::Value> = (at..at + 1000)
            .map(|i| serde_json::json!({"id": format!("d{i}"), "text": common::synthetic_doc(&mut rng, 3)}))
            .collect();
        let (status, v) = server.post("/v1/documents", &serde_json::json!({ "documents": docs }));
        if status == 200 {
            assert_eq!(failed, 0, "a write after the disk filled succeeded: {v}");
            acked.extend((at..at + 1000).map(|i| format!("d{i}")));
        } else {
            assert_eq!(status, 500, "{v}");
            let e = v["error"].as_str().unwrap();
            assert!(e.contains("No space left on device"), "{e}");
            if failed == 0 {
                // The documents of this request written before the error are named.
                if let Some(n) = e.split("the first ").nth(1) {
                    let n: usize = n.split(' ').next().unwrap().parse().unwrap();
                    acked.extend((at..at + n).map(|i| format!("d{i}")));
                }
            }
            failed += 1;
        }
        at += 1000;
    }
    let (status, _) = server.get("/v1/stats");
    assert_eq!(status, 200, "reads go on");
    server.stop();

    mnt.resize("256m");
    let fpdb =
        |dir: &Path, args: &[&str]| common::fpdb().current_dir(dir).args(args).output().unwrap();
    let o = fpdb(p, &["verify", "--db", store]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let stored = ids(&stdout(&fpdb(p, &["export", "--db", store])));
    let set: std::collections::HashSet<&String> = stored.iter().collect();
    let lost = acked.iter().filter(|i| !set.contains(i)).count();
    assert!(!acked.is_empty());
    assert_eq!(lost, 0, "of {} acknowledged", acked.len());
}
