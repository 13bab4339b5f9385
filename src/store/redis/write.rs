//! Writes: the lease (Lua scripts, granted in arrival order), batches journaled then applied,
//! `WAIT` for replicas, and the journal's encoding.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use redis::cluster::{cluster_pipe, ClusterPipeline};

use super::read::{bucket_of, has_values};
use super::{RedisStore, ARGS, KEEP_LOGS, PIPE};
use crate::error::{Error, Result};
use crate::store::{Batch, Cf, Op};

/// Take the lease in arrival order: KEYS lease, queue, seen; ARGV token, lease ms.
pub(super) const ACQUIRE_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], now)
local all = redis.call('HGETALL', KEYS[3])
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) < now - 3000 then
    redis.call('ZREM', KEYS[2], all[i])
    redis.call('HDEL', KEYS[3], all[i])
  end
end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
local head = redis.call('ZRANGE', KEYS[2], 0, 0)
if head[1] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
";

/// Extend the lease (or a batch's claim) if still ours: KEYS lease; ARGV token, lease ms.
pub(super) const RENEW_LUA: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

/// `applied` raised to N (never lowered): KEYS applied; ARGV n.
pub(super) const APPLIED_LUA: &str = r"
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
";

/// Give the lease up if still ours: KEYS lease; ARGV token.
pub(super) const RELEASE_LUA: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

impl RedisStore {
    /// The lease key holder's check: still ours (extended), else an error.
    pub(super) fn renew(&self) -> Result<()> {
        let ok = self.eval_token("renew the write lease", RENEW_LUA, &self.ns_key("lease"))?;
        if ok != 1 {
            self.leased.store(false, Ordering::SeqCst);
            return Err(Error::Storage(format!(
                "redis store {}: this writer lost its write lease (it stalled longer than {} s); \
                 nothing more was written",
                self.url.namespace,
                self.url.lease_ms / 1000
            )));
        }
        Ok(())
    }

    /// Run `lua` on `key` with this writer's token and the lease's time in ms (the lease's
    /// and the batches' claims' scripts).
    pub(super) fn eval_token(&self, what: &str, lua: &str, key: &str) -> Result<i64> {
        self.run(what, |c| {
            redis::cmd("EVAL")
                .arg(lua)
                .arg(1)
                .arg(key)
                .arg(&self.token)
                .arg(self.url.lease_ms)
                .query(c)
        })
    }

    /// Apply `ops` (idempotent: replaying them gives the same state), in pipelines of
    /// [`PIPE`] commands through the writer's connection (which a `WAIT` covers).
    pub(super) fn apply(&self, ops: &[Op]) -> Result<()> {
        let cmds = self.commands(ops);
        for chunk in cmds.chunks(PIPE) {
            let mut p: ClusterPipeline = cluster_pipe();
            for c in chunk {
                p.add_command(c.clone()).ignore();
            }
            self.run_write("write", true, |c| p.query::<()>(c))?;
        }
        Ok(())
    }

    /// The commands that apply `ops`: per bucket, the last change to each key (ZADD and
    /// HSET of the keys set, ZREM and HDEL of those removed); then the buckets written
    /// added to their family's registry.
    fn commands(&self, ops: &[Op]) -> Vec<redis::Cmd> {
        type Changes<'a> = BTreeMap<&'a [u8], Option<&'a [u8]>>;
        let mut by_bucket: BTreeMap<(usize, Vec<u8>), Changes> = BTreeMap::new();
        for op in ops {
            let (cf, key, value) = match op {
                Op::Put(cf, k, v) => (*cf, k, Some(v.as_slice())),
                Op::Delete(cf, k) => (*cf, k, None),
            };
            by_bucket
                .entry((cf.index(), bucket_of(cf, key)))
                .or_default()
                .insert(key.as_slice(), value);
        }
        let mut cmds: Vec<redis::Cmd> = Vec::new();
        let mut registry: BTreeMap<usize, Vec<&[u8]>> = BTreeMap::new();
        for ((cfi, bucket), changes) in &by_bucket {
            let cf = Cf::ALL[*cfi];
            let (z, h) = (self.zkey(cf, bucket), self.hkey(cf, bucket));
            let puts: Vec<(&[u8], &[u8])> = changes
                .iter()
                .filter_map(|(k, v)| v.map(|v| (*k, v)))
                .collect();
            let dels: Vec<&[u8]> = changes
                .iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| *k)
                .collect();
            if !puts.is_empty() {
                registry.entry(*cfi).or_default().push(bucket);
            }
            for chunk in puts.chunks(ARGS) {
                let mut zadd = redis::cmd("ZADD");
                zadd.arg(&z);
                for (k, _) in chunk {
                    zadd.arg(0).arg(*k);
                }
                cmds.push(zadd);
                if has_values(cf) {
                    let mut hset = redis::cmd("HSET");
                    hset.arg(&h);
                    for (k, v) in chunk {
                        hset.arg(*k).arg(*v);
                    }
                    cmds.push(hset);
                }
            }
            for chunk in dels.chunks(ARGS) {
                let mut zrem = redis::cmd("ZREM");
                zrem.arg(&z);
                for k in chunk {
                    zrem.arg(*k);
                }
                cmds.push(zrem);
                if has_values(cf) {
                    let mut hdel = redis::cmd("HDEL");
                    hdel.arg(&h);
                    for k in chunk {
                        hdel.arg(*k);
                    }
                    cmds.push(hdel);
                }
            }
        }
        for (cfi, buckets) in registry {
            for chunk in buckets.chunks(ARGS) {
                let mut zadd = redis::cmd("ZADD");
                zadd.arg(self.registry(Cf::ALL[cfi]));
                for b in chunk {
                    zadd.arg(0).arg(*b);
                }
                cmds.push(zadd);
            }
        }
        cmds
    }

    /// Log batch `n` (its journal `blob`) and make it the last committed, through the
    /// writer's connection: `log:n`, this writer as its owner (`owned`; expiring after the
    /// lease's time), then `commit` = n, in one pipeline (one slot); the log [`KEEP_LOGS`]
    /// batches older goes. A writer that dies before `applied` = n leaves `commit` >
    /// `applied` and its claim expires; the next writer then applies the batch from its log.
    pub(super) fn set_log(&self, n: u64, blob: &[u8], owned: bool) -> Result<()> {
        let (log, commit) = (self.log_key(n), self.ns_key("commit"));
        let owner = self.owner_key(n);
        let old = n.checked_sub(KEEP_LOGS).map(|o| self.log_key(o));
        self.run_write("write the journal", true, |c| {
            let mut p: ClusterPipeline = cluster_pipe();
            p.cmd("SET").arg(&log).arg(blob).ignore();
            if owned {
                p.cmd("SET")
                    .arg(&owner)
                    .arg(&self.token)
                    .arg("PX")
                    .arg(self.url.lease_ms)
                    .ignore();
            }
            p.cmd("SET").arg(&commit).arg(n).ignore();
            if let Some(old) = &old {
                p.cmd("DEL").arg(old).ignore();
            }
            p.query::<()>(c)
        })?;
        self.commit.store(n, Ordering::SeqCst);
        if self.url.wait > 0 {
            let mut u = self.unacked.lock().expect("unacked");
            u.log = Some((n, blob.to_vec()));
            u.applied = None;
        }
        Ok(())
    }

    /// Mark batch `n` applied (`applied` = n, never lowered), through the writer's
    /// connection.
    pub(super) fn set_applied(&self, n: u64) -> Result<()> {
        let applied = self.ns_key("applied");
        self.run_write("clear the journal", true, |c| {
            redis::cmd("EVAL")
                .arg(APPLIED_LUA)
                .arg(1)
                .arg(&applied)
                .arg(n)
                .query::<()>(c)
        })?;
        if self.url.wait > 0 {
            self.unacked.lock().expect("unacked").applied = Some(n);
        }
        Ok(())
    }

    /// The key of batch `n`'s owner.
    pub(super) fn owner_key(&self, n: u64) -> String {
        self.ns_key(&format!("owner:{n}"))
    }

    /// The error of a log that is gone or does not decode.
    pub(super) fn damaged(&self) -> Error {
        Error::Storage(format!(
            "redis store {}: the journal of an unfinished write is damaged or gone",
            self.url.namespace
        ))
    }

    /// The key of batch `n`'s log.
    pub(super) fn log_key(&self, n: u64) -> String {
        self.ns_key(&format!("log:{n}"))
    }

    /// Keep `ops` until a `WAIT` acknowledges them (only when the address asks for replicas).
    pub(super) fn note_unacked(&self, ops: &[Op]) {
        if self.url.wait > 0 {
            let mut u = self.unacked.lock().expect("unacked");
            u.ops.extend_from_slice(ops);
        }
    }

    /// Wait until `wait` replicas of every master have every write so far (a master that
    /// has lost its replicas, after a failover, holds writes up until one is back or the
    /// retry time is over).
    ///
    /// `WAIT` counts the replicas holding the writes of the connection it is sent on. When
    /// the writer's connection was replaced (a failover broke it, or a `WAIT` was unblocked
    /// because its master became a replica), what the old one wrote since the last
    /// acknowledged `WAIT` may be lost with a master that died before passing it on, and a
    /// `WAIT` on the new one would acknowledge it anyway. So those writes go through the new
    /// connection again first: the journal key set to what it should hold, then every change
    /// since (the same changes: the lease is this writer's, so nothing else wrote them in
    /// between, and writing one twice leaves what writing it once did).
    pub(super) fn wait_replicas(&self) -> Result<()> {
        if self.url.wait == 0 {
            return Ok(());
        }
        let deadline = Instant::now() + self.url.retry;
        let mut pause = std::time::Duration::from_millis(50);
        loop {
            let again = {
                let mut u = self.unacked.lock().expect("unacked");
                std::mem::take(&mut u.replaced).then(|| (u.log.clone(), u.applied, u.ops.clone()))
            };
            if let Some((log, applied, ops)) = again {
                self.write_again(log, applied, &ops)?;
            }
            // Short WAITs (under the response timeout), repeated.
            let waited = self.run_write("wait for replicas", false, |c| {
                redis::cmd("WAIT")
                    .arg(self.url.wait)
                    .arg(1000)
                    .query::<i64>(c)
            });
            let n = match waited {
                Ok(n) => n,
                Err(e) => {
                    // A `WAIT` changes nothing, and its errors in a failover are many (a
                    // broken connection, a master turned replica, a stale map of the cluster
                    // sending it to a replica, which refuses it): whatever the error, a new
                    // connection (a fresh map), the writes again through it, and wait, until
                    // the retry time is over.
                    self.lose_writer_connection();
                    if Instant::now() >= deadline {
                        return Err(e);
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_secs(1));
                    continue;
                }
            };
            let mut u = self.unacked.lock().expect("unacked");
            if u.replaced {
                continue; // replaced after the writes again: once more
            }
            if n >= i64::from(self.url.wait) {
                u.ops.clear();
                u.log = None;
                u.applied = None;
                return Ok(());
            }
            drop(u);
            if Instant::now() >= deadline {
                return Err(Error::Storage(format!(
                    "redis store {}: only {n} of {} replicas acknowledged the write in {} s",
                    self.url.namespace,
                    self.url.wait,
                    self.url.retry.as_secs()
                )));
            }
        }
    }

    /// What [`RedisStore::wait_replicas`] writes again through a new connection: the log of
    /// the batch being written and `commit`, its changes, and `applied` once they were.
    fn write_again(
        &self,
        log: Option<(u64, Vec<u8>)>,
        applied: Option<u64>,
        ops: &[Op],
    ) -> Result<()> {
        if let Some((n, blob)) = &log {
            self.set_log(*n, blob, true)?;
        }
        self.apply(ops)?;
        match applied {
            Some(n) => self.set_applied(n),
            None => Ok(()),
        }
    }

    /// Drop the writer's connection, as a failover does: the next wait writes what it had not
    /// acknowledged again through a new one. Public for tests of that; not part of the
    /// store's interface.
    #[doc(hidden)]
    pub fn lose_writer_connection(&self) {
        *self.writer.lock().expect("writer") = None;
        self.unacked.lock().expect("unacked").replaced = true;
    }

    /// Log `batch` as the next committed batch and stop there, as a writer killed between
    /// the log and applying it would (for tests of the replay; not part of the store's
    /// interface).
    #[doc(hidden)]
    pub fn write_journal_only(&self, batch: &Batch) -> Result<()> {
        let (commit, _) = self.commit_and_applied()?;
        self.set_log(commit + 1, &journal_of(batch.ops()), false)
    }

    /// The last committed batch's number and the last applied one's (0: none).
    pub(super) fn commit_and_applied(&self) -> Result<(u64, u64)> {
        let keys = [self.ns_key("commit"), self.ns_key("applied")];
        let (c, a): (Option<u64>, Option<u64>) = self.run("read the journal", |c| {
            redis::cmd("MGET").arg(&keys[..]).query(c)
        })?;
        Ok((c.unwrap_or(0), a.unwrap_or(0)))
    }

    /// Replay the journal key an older fpdb leaves when it dies between its journal and
    /// its changes. Returns whether there was one (what was read ahead may miss it:
    /// [`RedisStore::catch_up`]).
    pub(super) fn replay_older_journal(&self) -> Result<bool> {
        let journal = self.ns_key("journal");
        let older: Option<Vec<u8>> = self.run("read the journal", |c| {
            redis::cmd("GET").arg(&journal).query(c)
        })?;
        let Some(blob) = older else {
            return Ok(false);
        };
        let ops = ops_of_journal(&blob).ok_or_else(|| self.damaged())?;
        self.note_unacked(&ops);
        self.apply(&ops)?;
        self.run_write("clear the journal", true, |c| {
            redis::cmd("DEL").arg(&journal).query::<()>(c)
        })?;
        Ok(true)
    }
}

/// The journal of a batch: its ops, zstd-compressed (level 1: half the bytes of a batch of
/// short documents, for ~1 ms of CPU; the journal is written, replicated and fsynced once per
/// batch).
pub(super) fn journal_of(ops: &[Op]) -> Vec<u8> {
    let raw = encode_ops(ops);
    match zstd::bulk::compress(&raw, 1) {
        Ok(z) => [&b"Z"[..], &z].concat(),
        Err(_) => [&b"R"[..], &raw].concat(),
    }
}

/// The ops of a journal written by [`journal_of`] (None: damaged).
pub(super) fn ops_of_journal(blob: &[u8]) -> Option<Vec<Op>> {
    match blob.split_first()? {
        (b'Z', z) => decode_ops(&zstd::stream::decode_all(z).ok()?),
        (b'R', raw) => decode_ops(raw),
        _ => None,
    }
}

pub(super) fn encode_ops(ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::new();
    let field = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    for op in ops {
        match op {
            Op::Put(cf, k, v) => {
                out.push(1);
                out.push(cf.index() as u8);
                field(&mut out, k);
                field(&mut out, v);
            }
            Op::Delete(cf, k) => {
                out.push(2);
                out.push(cf.index() as u8);
                field(&mut out, k);
            }
        }
    }
    out
}

pub(super) fn decode_ops(mut b: &[u8]) -> Option<Vec<Op>> {
    pub(super) fn field<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
        let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let v = b.get(4..4 + n)?;
        *b = &b[4 + n..];
        Some(v)
    }
    let mut ops = Vec::new();
    while !b.is_empty() {
        let (tag, cf) = (b[0], *Cf::ALL.get(*b.get(1)? as usize)?);
        b = &b[2..];
        match tag {
            1 => {
                let k = field(&mut b)?.to_vec();
                ops.push(Op::Put(cf, k, field(&mut b)?.to_vec()));
            }
            2 => ops.push(Op::Delete(cf, field(&mut b)?.to_vec())),
            _ => return None,
        }
    }
    Some(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trips_and_refuses_damage() {
        let ops = vec![
            Op::Put(Cf::Docs, b"k".to_vec(), b"v".to_vec()),
            Op::Delete(Cf::Nshash, vec![0; 16]),
            Op::Put(Cf::Meta, Vec::new(), Vec::new()),
        ];
        let blob = encode_ops(&ops);
        assert_eq!(decode_ops(&blob), Some(ops.clone()));
        let journal = journal_of(&ops);
        assert_eq!(ops_of_journal(&journal), Some(ops.clone()));
        assert_eq!(ops_of_journal(&journal[..journal.len() / 2]), None);
        assert_eq!(ops_of_journal(b""), None);
        assert_eq!(ops_of_journal(&[&b"R"[..], &blob].concat()), Some(ops));
        assert_eq!(decode_ops(&blob[..blob.len() - 1]), None);
        assert_eq!(decode_ops(&[9, 0]), None);
        assert_eq!(decode_ops(&[1, 99]), None);
    }
}
