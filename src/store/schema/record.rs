//! Document records and their versions. Each version holds the fields of the one before it
//! and more, in the order of [`DocRecord`]'s fields, bincode-encoded one after another behind
//! a version byte. A record is written in the oldest version that holds it, so a store without
//! the newer settings is written exactly as before them and older binaries read it.
//!
//! Over 600 lines: the versions and the tests that check each one's bytes against the
//! encoding before it, read together.

use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use super::{
    corrupt, decode_config, Cf, ClusterRecord, DocRecord, Original, StoredMatch, RECORD_VERSION,
};
use crate::error::Result;

/// The versions of a document record (its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum DocVersion {
    /// The first fields, id to time ([`Base`]): [`RECORD_VERSION`], as every other record.
    Base,
    /// + MinHash band keys and exact-algorithm keys (stores with minhash or key algorithms).
    Keys,
    /// + keyword weights (the keyword weight check).
    Weights,
    /// + where each sentence of the sketch sits (`link_shape`).
    Order,
    /// + the figures' sketch (`template_figures`).
    Figures,
    /// + the publication time, the URLs cited and whether it is cited (`originals`).
    Published,
    /// + the digest of the text as given (`digests`).
    Digest,
    /// + the sentences of its site's template (`site_templates`).
    Template,
    /// + the documents it is an excerpt of (`excerpts`).
    Excerpts,
    /// + the high halves of its sentence hashes (`late_keys`).
    Highs,
}

impl DocVersion {
    const ALL: [DocVersion; 10] = [
        DocVersion::Base,
        DocVersion::Keys,
        DocVersion::Weights,
        DocVersion::Order,
        DocVersion::Figures,
        DocVersion::Published,
        DocVersion::Digest,
        DocVersion::Template,
        DocVersion::Excerpts,
        DocVersion::Highs,
    ];

    fn byte(self) -> u8 {
        match self {
            DocVersion::Base => RECORD_VERSION,
            DocVersion::Keys => 2,
            DocVersion::Weights => 3,
            DocVersion::Order => 4,
            DocVersion::Figures => 5,
            DocVersion::Published => 6,
            DocVersion::Digest => 7,
            DocVersion::Template => 8,
            DocVersion::Excerpts => 9,
            DocVersion::Highs => 10,
        }
    }

    fn of_byte(b: u8) -> Option<DocVersion> {
        DocVersion::ALL.into_iter().find(|v| v.byte() == b)
    }

    /// The oldest version that holds `r`.
    fn of(r: &DocRecord) -> DocVersion {
        if !r.highs.is_empty() {
            DocVersion::Highs
        } else if !r.excerpts.is_empty() {
            DocVersion::Excerpts
        } else if !r.template.is_empty() {
            DocVersion::Template
        } else if r.digest.is_some() {
            DocVersion::Digest
        } else if r.published.is_some() || !r.cites.is_empty() || r.cited {
            DocVersion::Published
        } else if !r.figures.is_empty() {
            DocVersion::Figures
        } else if !r.order.is_empty() {
            DocVersion::Order
        } else if !r.key_weights.is_empty() {
            DocVersion::Weights
        } else if !r.bands.is_empty() || !r.keys.is_empty() {
            DocVersion::Keys
        } else {
            DocVersion::Base
        }
    }

    /// Fields of a record of this version.
    fn fields(self) -> usize {
        match self {
            DocVersion::Base => 13,
            DocVersion::Keys => 15,
            DocVersion::Weights => 16,
            DocVersion::Order => 17,
            DocVersion::Figures => 18,
            DocVersion::Published => 21,
            DocVersion::Digest => 22,
            DocVersion::Template => 23,
            DocVersion::Excerpts => 24,
            DocVersion::Highs => 25,
        }
    }
}

/// The fields of a version 1 record (every version starts with them).
#[derive(Deserialize)]
struct Base {
    id: String,
    url: Option<String>,
    title: Option<String>,
    description: Option<String>,
    keywords: Option<String>,
    chars: u64,
    nshash: Vec<u64>,
    simhash: Option<u64>,
    sketch: Vec<u32>,
    shingles: Vec<u32>,
    similar_id: u64,
    matches: Vec<StoredMatch>,
    time: u64,
}

/// A record's fields as its version holds them, for bincode (a tuple: the fields one after
/// another, as bincode writes a struct).
struct Versioned<'a>(&'a DocRecord, DocVersion);

impl Serialize for Versioned<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let Versioned(r, v) = *self;
        let mut t = s.serialize_tuple(v.fields())?;
        t.serialize_element(&r.id)?;
        t.serialize_element(&r.url)?;
        t.serialize_element(&r.title)?;
        t.serialize_element(&r.description)?;
        t.serialize_element(&r.keywords)?;
        t.serialize_element(&r.chars)?;
        t.serialize_element(&r.nshash)?;
        t.serialize_element(&r.simhash)?;
        t.serialize_element(&r.sketch)?;
        t.serialize_element(&r.shingles)?;
        t.serialize_element(&r.similar_id)?;
        t.serialize_element(&r.matches)?;
        t.serialize_element(&r.time)?;
        if v >= DocVersion::Keys {
            t.serialize_element(&r.bands)?;
            t.serialize_element(&r.keys)?;
        }
        if v >= DocVersion::Weights {
            t.serialize_element(&r.key_weights)?;
        }
        if v >= DocVersion::Order {
            t.serialize_element(&r.order)?;
        }
        if v >= DocVersion::Figures {
            t.serialize_element(&r.figures)?;
        }
        if v >= DocVersion::Published {
            t.serialize_element(&r.published)?;
            t.serialize_element(&r.cites)?;
            t.serialize_element(&r.cited)?;
        }
        if v >= DocVersion::Digest {
            t.serialize_element(&r.digest)?;
        }
        if v >= DocVersion::Template {
            t.serialize_element(&r.template)?;
        }
        if v >= DocVersion::Excerpts {
            t.serialize_element(&r.excerpts)?;
        }
        if v >= DocVersion::Highs {
            t.serialize_element(&r.highs)?;
        }
        t.end()
    }
}

/// Encode a document record in the oldest version that holds it: without band keys,
/// exact-algorithm keys, keyword weights, sentence order and figures as version 1; without
/// weights, order and figures as version 2; without order and figures as version 3; without
/// figures as version 4; without a publication time as version 5; without a digest as
/// version 6; without a template as version 7; without excerpts as version 8; without the
/// high halves of its sentence hashes as version 9; else version 10.
pub fn encode_doc(r: &DocRecord) -> Vec<u8> {
    let v = DocVersion::of(r);
    let mut out = Vec::with_capacity(128 + 4 * (r.sketch.len() + r.shingles.len()));
    out.push(v.byte());
    bincode::serde::encode_into_std_write(Versioned(r, v), &mut out, bincode::config::standard())
        .expect("records always encode");
    out
}

/// Decode a document record written by [`encode_doc`] (or by `encode` before band keys): the
/// fields its version lacks are empty.
pub fn decode_doc(key: &[u8], v: &[u8]) -> Result<DocRecord> {
    let Some((&first, mut rest)) = v.split_first() else {
        return Err(corrupt(Cf::Docs, key, "empty record".into()));
    };
    let Some(version) = DocVersion::of_byte(first) else {
        return Err(corrupt(
            Cf::Docs,
            key,
            format!("unknown record version {first}"),
        ));
    };
    let b: Base = field(&mut rest, key)?;
    let mut r = DocRecord {
        id: b.id,
        url: b.url,
        title: b.title,
        description: b.description,
        keywords: b.keywords,
        chars: b.chars,
        nshash: b.nshash,
        simhash: b.simhash,
        sketch: b.sketch,
        shingles: b.shingles,
        similar_id: b.similar_id,
        matches: b.matches,
        time: b.time,
        bands: Vec::new(),
        keys: Vec::new(),
        key_weights: Vec::new(),
        order: Vec::new(),
        figures: Vec::new(),
        published: None,
        cites: Vec::new(),
        cited: false,
        digest: None,
        template: Vec::new(),
        excerpts: Vec::new(),
        highs: Vec::new(),
    };
    if version >= DocVersion::Keys {
        r.bands = field(&mut rest, key)?;
        r.keys = field(&mut rest, key)?;
    }
    if version >= DocVersion::Weights {
        r.key_weights = field(&mut rest, key)?;
    }
    if version >= DocVersion::Order {
        r.order = field(&mut rest, key)?;
    }
    if version >= DocVersion::Figures {
        r.figures = field(&mut rest, key)?;
    }
    if version >= DocVersion::Published {
        r.published = field(&mut rest, key)?;
        r.cites = field(&mut rest, key)?;
        r.cited = field(&mut rest, key)?;
    }
    if version >= DocVersion::Digest {
        r.digest = field(&mut rest, key)?;
    }
    if version >= DocVersion::Template {
        r.template = field(&mut rest, key)?;
    }
    if version >= DocVersion::Excerpts {
        r.excerpts = field(&mut rest, key)?;
    }
    if version >= DocVersion::Highs {
        r.highs = field(&mut rest, key)?;
    }
    Ok(r)
}

/// Version of cluster records that name their original (`originals`); version 1
/// ([`RECORD_VERSION`]) holds parent, first document and size.
const CLUSTER_ORIGINAL: u8 = 2;

/// Encode a cluster record: version 1 (byte for byte what `encode` wrote before originals)
/// without an original, else version 2 with the original's time and seq after the rest.
pub fn encode_cluster(r: &ClusterRecord) -> Vec<u8> {
    let config = bincode::config::standard();
    let mut out = Vec::with_capacity(24);
    let base = (r.parent, r.first_seq, r.size);
    match r.original {
        None => {
            out.push(RECORD_VERSION);
            bincode::serde::encode_into_std_write(base, &mut out, config)
        }
        Some(o) => {
            out.push(CLUSTER_ORIGINAL);
            bincode::serde::encode_into_std_write(
                (base, (o.uncited, o.time, o.seq, &r.pending_cites)),
                &mut out,
                config,
            )
        }
    }
    .expect("records always encode");
    out
}

/// Decode a cluster record written by [`encode_cluster`] (or by `encode`).
pub fn decode_cluster(key: &[u8], v: &[u8]) -> Result<ClusterRecord> {
    let Some((&first, mut rest)) = v.split_first() else {
        return Err(corrupt(Cf::Clusters, key, "empty record".into()));
    };
    if first != RECORD_VERSION && first != CLUSTER_ORIGINAL {
        return Err(corrupt(
            Cf::Clusters,
            key,
            format!("unknown record version {first}"),
        ));
    }
    let cluster = |e: crate::Error| match e {
        crate::Error::Corruption { key: k, detail, .. } => crate::Error::Corruption {
            cf: Cf::Clusters.name(),
            key: k,
            detail,
        },
        e => e,
    };
    let (parent, first_seq, size): (Option<u64>, u64, u64) =
        field(&mut rest, key).map_err(cluster)?;
    let mut pending_cites = Vec::new();
    let original = if first == CLUSTER_ORIGINAL {
        let uncited: bool = field(&mut rest, key).map_err(cluster)?;
        let time: i64 = field(&mut rest, key).map_err(cluster)?;
        let seq: u64 = field(&mut rest, key).map_err(cluster)?;
        pending_cites = field(&mut rest, key).map_err(cluster)?;
        Some(Original { uncited, time, seq })
    } else {
        None
    };
    Ok(ClusterRecord {
        parent,
        first_seq,
        size,
        original,
        pending_cites,
    })
}

/// The next field of a record (`rest`, advanced past it).
fn field<T: for<'de> Deserialize<'de>>(rest: &mut &[u8], key: &[u8]) -> Result<T> {
    let (value, used) = bincode::serde::decode_from_slice(rest, decode_config())
        .map_err(|e| corrupt(Cf::Docs, key, e.to_string()))?;
    *rest = &rest[used..];
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::store::schema::encode;

    const DOC_RECORD_BANDS: u8 = 2;
    const DOC_RECORD_WEIGHTS: u8 = 3;
    const DOC_RECORD_ORDER: u8 = 4;
    const DOC_RECORD_FIGURES: u8 = 5;

    fn doc(bands: Vec<u64>) -> DocRecord {
        DocRecord {
            id: "a".into(),
            url: None,
            title: Some("t".into()),
            description: None,
            keywords: None,
            chars: 40,
            nshash: vec![1, 2],
            simhash: Some(7),
            sketch: vec![3],
            shingles: vec![4, 5],
            similar_id: 9,
            matches: Vec::new(),
            time: 11,
            bands,
            ..Default::default()
        }
    }

    #[test]
    fn document_records_without_bands_keep_the_version_1_encoding() {
        // The version 1 layout: the same fields without `bands` (what older binaries read).
        #[derive(Serialize)]
        struct V1<'a> {
            id: &'a str,
            url: Option<String>,
            title: Option<&'a str>,
            description: Option<String>,
            keywords: Option<String>,
            chars: u64,
            nshash: Vec<u64>,
            simhash: Option<u64>,
            sketch: Vec<u32>,
            shingles: Vec<u32>,
            similar_id: u64,
            matches: Vec<StoredMatch>,
            time: u64,
        }
        let plain = doc(Vec::new());
        let v1 = encode(&V1 {
            id: "a",
            url: None,
            title: Some("t"),
            description: None,
            keywords: None,
            chars: 40,
            nshash: vec![1, 2],
            simhash: Some(7),
            sketch: vec![3],
            shingles: vec![4, 5],
            similar_id: 9,
            matches: Vec::new(),
            time: 11,
        });
        assert_eq!(encode_doc(&plain), v1);
        assert_eq!(decode_doc(b"k", &v1).unwrap(), plain);
        let banded = doc(vec![u64::MAX, 3]);
        let enc = encode_doc(&banded);
        assert_eq!(enc[0], DOC_RECORD_BANDS);
        assert_eq!(decode_doc(b"k", &enc).unwrap(), banded);
        assert!(decode_doc(b"k", &[3, 0]).is_err());
        assert!(decode_doc(b"k", &enc[..enc.len() - 1]).is_err());
        // Keyword weights: version 3; keys without weights stay version 2.
        let mut keyed = doc(Vec::new());
        keyed.keys = vec![0xA2 << 56 | 5];
        assert_eq!(encode_doc(&keyed)[0], DOC_RECORD_BANDS);
        assert_eq!(decode_doc(b"k", &encode_doc(&keyed)).unwrap(), keyed);
        keyed.key_weights = vec![0.25, 2.0];
        let enc = encode_doc(&keyed);
        assert_eq!(enc[0], DOC_RECORD_WEIGHTS);
        assert_eq!(decode_doc(b"k", &enc).unwrap(), keyed);
        // Sentence order: version 4, whatever else the record has or lacks.
        let mut ordered = doc(Vec::new());
        ordered.order = vec![0, 200];
        let enc = encode_doc(&ordered);
        assert_eq!(enc[0], DOC_RECORD_ORDER);
        assert_eq!(decode_doc(b"k", &enc).unwrap(), ordered);
        assert!(decode_doc(b"k", &enc[..enc.len() - 1]).is_err());
        assert!(decode_doc(b"k", &[4, 0]).is_err());
        // Figures: version 5, with or without the order.
        for order in [vec![], vec![1, 2]] {
            let mut figured = doc(Vec::new());
            figured.order = order;
            figured.figures = vec![7, 9, u32::MAX];
            let enc = encode_doc(&figured);
            assert_eq!(enc[0], DOC_RECORD_FIGURES);
            assert_eq!(decode_doc(b"k", &enc).unwrap(), figured);
            assert!(decode_doc(b"k", &enc[..enc.len() - 1]).is_err());
        }
        // A version 4 record is decoded as it was before figures.
        assert_eq!(
            decode_doc(b"k", &encode_doc(&ordered)).unwrap().figures,
            Vec::<u32>::new()
        );
    }

    #[test]
    fn a_damaged_length_is_an_error_not_an_abort() {
        // Version 1, then the id's length as a varint u64 of 2^63: without a decode limit
        // bincode tried to allocate it and the process aborted.
        let mut v = vec![1, 253];
        v.extend_from_slice(&(1u64 << 63).to_le_bytes());
        assert!(matches!(
            decode_doc(b"k", &v),
            Err(Error::Corruption { .. })
        ));
        v[0] = DOC_RECORD_BANDS;
        assert!(decode_doc(b"k", &v).is_err());
    }

    /// The encoding records had before their versions were types: the whole record encoded,
    /// then the empty fields a version lacks trimmed from its end (each one length byte 0).
    fn trimmed_encoding(r: &DocRecord) -> Vec<u8> {
        let mut out = encode(r);
        // `published`, `cites`, `cited`, `digest`, `template`, `excerpts` and `highs` (None,
        // empty, false, None, empty, empty, empty: one byte 0 each), the fields added after
        // this encoding was replaced.
        assert!(r.published.is_none() && r.cites.is_empty() && !r.cited && r.digest.is_none());
        assert!(r.template.is_empty() && r.excerpts.is_empty() && r.highs.is_empty());
        out.truncate(out.len() - 7);
        if !r.figures.is_empty() {
            out[0] = DOC_RECORD_FIGURES;
            return out;
        }
        out.truncate(out.len() - 1);
        if !r.order.is_empty() {
            out[0] = DOC_RECORD_ORDER;
            return out;
        }
        out.truncate(out.len() - 1);
        if r.bands.is_empty() && r.keys.is_empty() && r.key_weights.is_empty() {
            out.truncate(out.len() - 3);
        } else if r.key_weights.is_empty() {
            out.truncate(out.len() - 1);
            out[0] = DOC_RECORD_BANDS;
        } else {
            out[0] = DOC_RECORD_WEIGHTS;
        }
        out
    }

    fn some<T: std::fmt::Debug + Clone>(
        s: impl proptest::strategy::Strategy<Value = T> + Clone,
    ) -> impl proptest::strategy::Strategy<Value = Vec<T>> {
        // Empty half of the time: the versions depend on which lists are empty.
        proptest::prop_oneof![
            proptest::strategy::Just(Vec::new()),
            proptest::collection::vec(s, 1..5)
        ]
    }

    proptest::proptest! {
        /// Every record is written byte for byte as before (stores stay readable by the
        /// binaries that wrote them) and reads back equal; one byte cut off is an error.
        #[test]
        fn versions_encode_as_the_trimmed_record_and_round_trip(
            id in ".{0,12}",
            title in proptest::option::of(".{0,8}"),
            chars in proptest::num::u64::ANY,
            nshash in some(proptest::num::u64::ANY),
            simhash in proptest::option::of(proptest::num::u64::ANY),
            sketch in some(proptest::num::u32::ANY),
            bands in some(proptest::num::u64::ANY),
            keys in some(proptest::num::u64::ANY),
            key_weights in some(0.0f32..100.0),
            order in some(proptest::num::u8::ANY),
            figures in some(proptest::num::u32::ANY),
            published in proptest::option::of(proptest::num::i64::ANY),
            cites in some(proptest::num::u64::ANY),
            cited in proptest::bool::ANY,
            digest in proptest::option::of(proptest::num::u64::ANY),
            template in some(proptest::num::u32::ANY),
            excerpts in some(proptest::num::u64::ANY),
            highs in some(proptest::num::u32::ANY),
            time in proptest::num::u64::ANY,
        ) {
            let r = DocRecord {
                id,
                url: None,
                title,
                description: Some("d".into()),
                keywords: None,
                chars,
                nshash,
                simhash,
                sketch: sketch.clone(),
                shingles: sketch,
                similar_id: chars / 3,
                matches: vec![StoredMatch { seq: 4, algo: crate::options::Algo::Nshash, score: 0.5, overlap: 1.0 }],
                time,
                bands,
                keys,
                key_weights,
                order,
                figures,
                published,
                cites,
                cited,
                digest,
                template,
                excerpts,
                highs,
            };
            let enc = encode_doc(&r);
            if !r.highs.is_empty() {
                proptest::prop_assert_eq!(enc[0], 10);
            } else if !r.excerpts.is_empty() {
                proptest::prop_assert_eq!(enc[0], 9);
            } else if !r.template.is_empty() {
                proptest::prop_assert_eq!(enc[0], 8);
            } else if r.digest.is_some() {
                proptest::prop_assert_eq!(enc[0], 7);
            } else if r.published.is_none() && r.cites.is_empty() && !r.cited {
                proptest::prop_assert_eq!(&enc, &trimmed_encoding(&r));
            } else {
                proptest::prop_assert_eq!(enc[0], 6);
            }
            proptest::prop_assert_eq!(decode_doc(b"k", &enc).unwrap(), r);
            proptest::prop_assert!(decode_doc(b"k", &enc[..enc.len() - 1]).is_err());
        }
    }

    proptest::proptest! {
        /// Cluster records without an original are written as `encode` wrote them (older
        /// binaries read them); with one they round-trip; one byte cut off is an error.
        #[test]
        fn cluster_records_round_trip_in_their_versions(
            parent in proptest::option::of(proptest::num::u64::ANY),
            first_seq in proptest::num::u64::ANY,
            size in proptest::num::u64::ANY,
            original in proptest::option::of((proptest::bool::ANY, proptest::num::i64::ANY, proptest::num::u64::ANY)),
        ) {
            let r = ClusterRecord {
                parent,
                first_seq,
                size,
                original: original.map(|(uncited, time, seq)| Original { uncited, time, seq }),
                pending_cites: if original.is_some() { vec![first_seq, size] } else { Vec::new() },
            };
            let enc = encode_cluster(&r);
            if r.original.is_none() {
                #[derive(serde::Serialize)]
                struct V1 {
                    parent: Option<u64>,
                    first_seq: u64,
                    size: u64,
                }
                proptest::prop_assert_eq!(&enc, &encode(&V1 { parent, first_seq, size }));
            }
            proptest::prop_assert_eq!(decode_cluster(b"k", &enc).unwrap(), r);
            proptest::prop_assert!(decode_cluster(b"k", &enc[..enc.len() - 1]).is_err());
        }
    }
}
