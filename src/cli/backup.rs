//! `fpdb backup DIR`: a consistent copy of the store (RocksDB checkpoint: hard links), made
//! while an ingest runs if need be; restore by opening the copy.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fpdb::{Error, Fpdb};

use super::output::{check_outside_store, EXIT_OK};

#[derive(Args, Debug)]
pub(super) struct BackupArgs {
    /// New directory to write the copy into (must not exist)
    dir: PathBuf,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    json: bool,
}

pub(super) fn backup(path: &PathBuf, a: &BackupArgs) -> anyhow::Result<u8> {
    // Inside the store, the copy would be removed with the store (and read as part of it).
    check_outside_store("the backup directory", Some(&a.dir), path)?;
    if a.dir.exists() {
        anyhow::bail!(
            "{} already exists: a backup goes into a new directory",
            a.dir.display()
        );
    }
    // The writer's own view when the store is free; while another process ingests, a
    // read-only view of what it has synced (retried: its compactions may remove a file
    // between listing and linking).
    match Fpdb::builder().open(path) {
        Ok(mut db) => db.maintenance().backup(&a.dir)?,
        Err(Error::Locked { .. }) => {
            // A read-only open racing the writer's flush can miss a write-ahead log the writer
            // just deleted, and see some column families at an older point than others: the
            // copy is verified, and taken again when it does not hold together.
            let mut tries = 0;
            loop {
                let copied = Fpdb::builder()
                    .read_only(true)
                    .open(path)
                    .and_then(|mut db| {
                        db.maintenance().backup(&a.dir)?;
                        Fpdb::builder()
                            .read_only(true)
                            .open(&a.dir)?
                            .searcher()
                            .verify()?;
                        Ok(())
                    });
                match copied {
                    Ok(()) => break,
                    Err(e) if tries < 10 => {
                        tries += 1;
                        let _ = std::fs::remove_dir_all(&a.dir);
                        eprintln!("fpdb: backup taken again: the view was not consistent ({e})");
                        std::thread::sleep(std::time::Duration::from_millis(200));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Err(e) => return Err(e.into()),
    }
    let copy = Fpdb::builder()
        .read_only(true)
        .open(&a.dir)
        .with_context(|| format!("the backup in {} does not open", a.dir.display()))?;
    let s = copy.searcher().stats();
    if a.json {
        outln!(
            "{}",
            serde_json::json!({"backup": a.dir, "documents": s.documents, "clusters": s.clusters, "bytes": s.disk_bytes})
        );
    } else {
        outln!(
            "backup {}: {} documents, {} clusters, {:.1} MiB",
            a.dir.display(),
            s.documents,
            s.clusters,
            s.disk_bytes as f64 / f64::from(1 << 20)
        );
    }
    Ok(EXIT_OK)
}
