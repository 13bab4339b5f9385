//! The algorithms that link documents, by the names they are reported, stored and asked for
//! under (`--algos`, matches in results, exports and records).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An algorithm that links documents. Serialized as its name ([`Algo::name`]), in JSON and
/// in stored records alike, so records written with names read back as these values. With
/// the `cli` feature it is also the CLI's `--algos` values (the same names; the doc comments
/// are their help).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Algo {
    /// shared sentence hashes (the nshash scheme)
    Nshash,
    /// 64-bit simhash within `--simhash-k` bits
    Simhash,
    /// shared MinHash bands (`--minhash-bands`)
    Minhash,
    /// I-Match (terms in the top 70% by IDF, one AP hash)
    Imatch,
    /// keyword fingerprint (the 10 heaviest TF-IDF terms, sorted, MD5)
    Keywords,
    /// keyword fingerprint, terms in weight order
    KeywordsCon,
    /// keyword percentage (the most frequent 2% of the terms, in multiples of 5, MD5)
    KeywordsPct,
    /// description key (MD5 of the meta description, else of the first 512 bytes of text)
    Des,
    /// punctuation context (3 parts, all shared)
    Punct,
    /// segment signatures (8 segments, 5 shared)
    Segments,
    /// keywords with the weight check (shared terms' weights must agree, see --weight-check)
    KeywordsCheck,
    /// keywords-con with the weight check
    KeywordsConCheck,
    /// punctuation context with the title (parts weigh 1, the title 1.5; 3 needed)
    PunctTitle,
    /// two-stage content fingerprint (3 core words of title/keywords/description, else of the
    /// text, with each of the 4 largest paragraphs; 2 shared)
    TwoStage,
}

impl Algo {
    /// Every algorithm, in the order `--algos` lists them.
    pub const ALL: [Algo; 14] = [
        Algo::Nshash,
        Algo::Simhash,
        Algo::Minhash,
        Algo::Imatch,
        Algo::Keywords,
        Algo::KeywordsCon,
        Algo::KeywordsPct,
        Algo::Des,
        Algo::Punct,
        Algo::Segments,
        Algo::KeywordsCheck,
        Algo::KeywordsConCheck,
        Algo::PunctTitle,
        Algo::TwoStage,
    ];

    /// The name it is reported, stored and asked for under.
    pub const fn name(self) -> &'static str {
        match self {
            Algo::Nshash => "nshash",
            Algo::Simhash => "simhash",
            Algo::Minhash => "minhash",
            Algo::Imatch => "imatch",
            Algo::Keywords => "keywords",
            Algo::KeywordsCon => "keywords-con",
            Algo::KeywordsPct => "keywords-pct",
            Algo::Des => "des",
            Algo::Punct => "punct",
            Algo::Segments => "segments",
            Algo::KeywordsCheck => "keywords-check",
            Algo::KeywordsConCheck => "keywords-con-check",
            Algo::PunctTitle => "punct-title",
            Algo::TwoStage => "two-stage",
        }
    }

    /// The algorithm called `name`.
    pub fn by_name(name: &str) -> Option<Algo> {
        Algo::ALL.into_iter().find(|a| a.name() == name)
    }
}

impl std::fmt::Display for Algo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for Algo {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl Serialize for Algo {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Algo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Algo, D::Error> {
        let name = String::deserialize(d)?;
        Algo::by_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown algorithm `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::Algo;

    #[test]
    fn every_algorithm_is_found_by_its_name_and_serialized_as_it() {
        // Records are bincode (standard configuration) of serde values.
        let cfg = bincode::config::standard();
        for a in Algo::ALL {
            assert_eq!(Algo::by_name(a.name()), Some(a));
            assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{a}\""));
            // In a record, as the name was written before it had a type.
            let as_name = bincode::serde::encode_to_vec(a.name().to_string(), cfg).unwrap();
            assert_eq!(bincode::serde::encode_to_vec(a, cfg).unwrap(), as_name);
            let (back, _): (Algo, usize) =
                bincode::serde::decode_from_slice(&as_name, cfg).unwrap();
            assert_eq!(back, a);
        }
        assert_eq!(Algo::by_name("simhash2"), None);
        // The exact-key algorithms are the eleven after nshash, simhash and minhash, each
        // made from its own name.
        for a in Algo::ALL {
            let key = super::super::KeyAlgo::of(a);
            assert_eq!(
                key.is_some(),
                !matches!(a, Algo::Nshash | Algo::Simhash | Algo::Minhash)
            );
            assert_eq!(key.map(|k| k.algo()), key.map(|_| a));
            assert_eq!(super::super::KeyAlgo::by_name(a.name()), key);
        }
        let nope = bincode::serde::encode_to_vec("nope", cfg).unwrap();
        assert!(bincode::serde::decode_from_slice::<Algo, _>(&nope, cfg).is_err());
    }
}
