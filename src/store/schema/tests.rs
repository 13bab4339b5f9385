//! Unit tests of the key layouts and record codecs (`store/schema/mod.rs`).

use super::*;

#[test]
fn simhash_range_covers_exactly_the_prefix() {
    let (s, e) = simhash_range(2, 0x10, 0x1f);
    let inside = simhash_key(2, 0x1f, Seq(u64::MAX));
    let outside = simhash_key(2, 0x20, Seq(0));
    assert!(s.as_slice() <= inside.as_slice() && inside.as_slice() < e.as_slice());
    assert!(outside.as_slice() >= e.as_slice());
    let (_, e) = simhash_range(2, 0, u64::MAX);
    assert!(simhash_key(3, 0, Seq(0)).as_slice() >= e.as_slice());
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one case per format, newest first: a table read top to bottom"
)]
fn stores_without_the_format_4_settings_stay_format_3() {
    use crate::options::Options;
    let legacy: Options = serde_json::from_str(
        r#"{"nshash":true,"simhash":true,"nshash_n":5,"nshash_hash":"farmhash",
            "min_sentence_chars":10,"nshash_min_shared":1,"verify_overlap_pct":60,
            "simhash_k":3,"simhash_blocks":6,"expected_docs":10000000}"#,
    )
    .unwrap();
    assert_eq!(legacy.minhash_bands, 0);
    assert_eq!(legacy.verify_resemblance_pct, 90);
    assert!(!legacy.tight_clusters);
    assert_eq!(legacy.strong_resemblance_pct, 0);
    assert!(!legacy.tw_phrases);
    assert!(!legacy.link_shape);
    assert!(!legacy.template_figures);
    assert_eq!(format_for(&legacy), format_value_of(FormatVersion::PLAIN));
    assert_eq!(format_for(&Options::default()), format_value());
    assert!(!legacy.originals);
    assert!(!legacy.digests);
    assert!(!legacy.teasers);
    assert!(!legacy.reordered_lines);
    assert!(!legacy.furniture);
    assert!(!legacy.page_teasers);
    assert!(!legacy.site_templates);
    assert!(!legacy.batch_furniture);
    assert!(!legacy.same_site_templates);
    assert!(!legacy.site_knowledge);
    assert!(!legacy.excerpts);
    assert!(!legacy.headings);
    assert!(!legacy.excerpt_copies);
    assert!(!legacy.later_templates);
    assert!(!legacy.other_holders);
    assert!(!legacy.cut_excerpts);
    assert!(!legacy.first_links);
    assert!(!legacy.host_lines_join_one);
    assert!(!legacy.late_links);
    assert!(!legacy.left_out_figures);
    assert!(!legacy.heading_figures);
    assert!(!legacy.late_keys);
    assert!(!legacy.band_holders);
    assert_eq!(legacy.simhash_min_terms, 1);
    // Band keys that propose their oldest holder only: a rule of rules version 0.1 that
    // changes no layout, so format 20 either way.
    let rules20 = Options {
        band_holders: false,
        ..Options::default()
    };
    assert_eq!(format_for(&rules20), format_value());
    // The format 19 defaults (no late keys: no version 10 records).
    let rules19 = Options {
        late_keys: false,
        ..rules20.clone()
    };
    assert_eq!(format_for(&rules19), format_value_of(FormatVersion(19)));
    // The format 18 defaults (no excerpt rule, no headings: a rule of format 19 that changes
    // no layout, one of rules version 0.1).
    let rules18 = Options {
        late_keys: false,
        band_holders: false,
        excerpts: false,
        headings: false,
        excerpt_copies: false,
        later_templates: false,
        other_holders: false,
        cut_excerpts: false,
        first_links: false,
        host_lines_join_one: false,
        late_links: false,
        left_out_figures: false,
        heading_figures: false,
        ..Options::default()
    };
    assert_eq!(format_for(&rules18), format_value_of(FormatVersion(18)));
    // The format 17 defaults (site knowledge as format 17 binaries learn it).
    let rules17 = Options {
        site_knowledge: false,
        ..rules18
    };
    assert_eq!(format_for(&rules17), format_value_of(FormatVersion(17)));
    // The format 16 defaults (a simhash for every document with a term).
    let rules16 = Options {
        simhash_min_terms: 1,
        ..rules17
    };
    assert_eq!(format_for(&rules16), format_value_of(FormatVersion(16)));
    // The format 15 defaults (pages of one host compared whole).
    let rules15 = Options {
        same_site_templates: false,
        ..rules16
    };
    assert_eq!(format_for(&rules15), format_value_of(FormatVersion(15)));
    // The format 14 defaults (no furniture learned from a batch's pages together).
    let rules14 = Options {
        batch_furniture: false,
        ..rules15
    };
    assert_eq!(format_for(&rules14), format_value_of(FormatVersion(14)));
    // The format 13 defaults (no teasers on pages, no sites' templates); either makes 14.
    let rules13 = Options {
        page_teasers: false,
        site_templates: false,
        ..rules14
    };
    for one in [
        Options {
            page_teasers: true,
            ..rules13.clone()
        },
        Options {
            site_templates: true,
            ..rules13.clone()
        },
    ] {
        assert_eq!(format_for(&one), format_value_of(FormatVersion(14)));
    }
    assert_eq!(format_for(&rules13), format_value_of(FormatVersion(13)));
    // The format 12 defaults (no furniture either).
    let rules12 = Options {
        furniture: false,
        ..rules13
    };
    assert_eq!(format_for(&rules12), format_value_of(FormatVersion(12)));
    // The format 11 defaults (no reordered lines either).
    let rules11 = Options {
        reordered_lines: false,
        ..rules12
    };
    assert_eq!(format_for(&rules11), format_value_of(FormatVersion(11)));
    // The format 10 defaults (no teasers either).
    let rules10 = Options {
        teasers: false,
        ..rules11
    };
    assert_eq!(format_for(&rules10), format_value_of(FormatVersion(10)));
    // The format 9 defaults (no digests either).
    let rules9 = Options {
        digests: false,
        ..rules10
    };
    assert_eq!(format_for(&rules9), format_value_of(FormatVersion(9)));
    // The format 8 defaults (no originals either).
    let rules8 = Options {
        originals: false,
        ..rules9
    };
    assert_eq!(format_for(&rules8), format_value_of(FormatVersion(8)));
    // The format 7 defaults (no template figures either).
    let rules7 = Options {
        template_figures: false,
        ..rules8
    };
    assert_eq!(format_for(&rules7), format_value_of(FormatVersion(7)));
    // The format 6 defaults (no link shape either).
    let rules6 = Options {
        link_shape: false,
        ..rules7
    };
    assert_eq!(format_for(&rules6), format_value_of(FormatVersion(6)));
    // The format 5 defaults (no Taiwan-vocabulary fold either).
    let rules5 = Options {
        tw_phrases: false,
        ..rules6
    };
    assert_eq!(format_for(&rules5), format_value_of(FormatVersion(5)));
    let keyed = Options {
        key_algos: crate::options::KeyAlgos(vec![crate::options::KeyAlgo::imatch()]),
        ..legacy.clone()
    };
    assert_eq!(format_for(&keyed), format_value_of(FormatVersion(4)));
    // The format 4 defaults (tight clusters without the strong link by resemblance).
    let rules4 = Options {
        strong_resemblance_pct: 0,
        ..rules5.clone()
    };
    assert_eq!(format_for(&rules4), format_value_of(FormatVersion(4)));
    // The settings of format 5.
    for algo in [
        crate::options::KeyAlgo::keywords_check(),
        crate::options::KeyAlgo::PunctTitle,
        crate::options::KeyAlgo::two_stage(),
    ] {
        let o = Options {
            key_algos: crate::options::KeyAlgos(vec![algo]),
            ..legacy.clone()
        };
        assert_eq!(format_for(&o), format_value_of(FormatVersion(5)));
        let o = Options {
            tw_phrases: true,
            ..o
        };
        assert_eq!(format_for(&o), format_value_of(FormatVersion(6)));
    }
}

#[test]
fn records_round_trip_and_garbage_is_corruption() {
    let c = ClusterRecord {
        parent: Some(3),
        first_seq: 9,
        size: 4,
        original: None,
        pending_cites: Vec::new(),
    };
    let enc = encode(&c);
    assert_eq!(
        decode::<ClusterRecord>(Cf::Clusters, b"k", &enc).unwrap(),
        c
    );
    assert!(matches!(
        decode::<ClusterRecord>(Cf::Clusters, b"k", &[9, 1]),
        Err(Error::Corruption { .. })
    ));
    assert!(decode::<ClusterRecord>(Cf::Clusters, b"k", &[1]).is_err());
}

/// A `furniture` value is up to 8 cluster ids of 8 bytes, or empty (furniture); anything
/// else is a located corruption error, never a panic.
#[test]
fn furniture_values_decode_and_garbage_is_refused() {
    let key = furniture_key(7, 9);
    assert_eq!(decode_furniture(&key, &[]).unwrap(), Vec::<u64>::new());
    let two: Vec<u8> = [3u64, 5].iter().flat_map(|c| c.to_be_bytes()).collect();
    assert_eq!(decode_furniture(&key, &two).unwrap(), vec![3, 5]);
    for bad in [vec![1u8; 7], vec![0u8; 9], vec![0u8; 72]] {
        match decode_furniture(&key, &bad) {
            Err(crate::Error::Corruption { cf, .. }) => assert_eq!(cf, "furniture"),
            other => panic!("{} bytes: {other:?}", bad.len()),
        }
    }
}

/// The format rule as it was written before the table of settings: one branch per format,
/// newest first. The table's rule (`Options::rules_format`) must mark every store as it did.
fn ladder(opts: &crate::options::Options) -> FormatVersion {
    let plain = opts.minhash_bands == 0
        && opts.key_algos.0.is_empty()
        && !opts.tight_clusters
        && opts.strong_resemblance_pct == 0
        && opts.verify_resemblance_pct == crate::options::Options::LEGACY_RESEMBLANCE;
    let format5 = opts.strong_resemblance_pct > 0 || opts.key_algos.since() == FormatVersion(5);
    FormatVersion(if opts.late_keys || opts.band_holders {
        20
    } else if opts.excerpts
        || opts.headings
        || opts.excerpt_copies
        || opts.later_templates
        || opts.other_holders
        || opts.cut_excerpts
        || opts.first_links
        || opts.host_lines_join_one
        || opts.late_links
        || opts.left_out_figures
        || opts.heading_figures
    {
        19
    } else if opts.site_knowledge {
        18
    } else if opts.simhash_min_terms != 1 {
        17
    } else if opts.same_site_templates {
        16
    } else if opts.batch_furniture {
        15
    } else if opts.page_teasers || opts.site_templates {
        14
    } else if opts.furniture {
        13
    } else if opts.reordered_lines {
        12
    } else if opts.teasers {
        11
    } else if opts.digests {
        10
    } else if opts.originals {
        9
    } else if opts.template_figures {
        8
    } else if opts.link_shape {
        7
    } else if opts.tw_phrases {
        6
    } else if plain {
        3
    } else if format5 {
        5
    } else {
        4
    })
}

proptest::proptest! {
    /// Any mix of the rules' settings is marked with the format the ladder gives it.
    #[test]
    fn the_tables_format_rule_is_the_ladder(
        flags in proptest::collection::vec(proptest::bool::ANY, 28),
        strong in proptest::sample::select(vec![0u32, 78]),
        resemblance in proptest::sample::select(vec![60u32, 90]),
        bands in proptest::sample::select(vec![0u32, 8]),
        keys in 0usize..4,
        min_terms in proptest::sample::select(vec![1u32, 8]),
    ) {
        use crate::options::{KeyAlgo, KeyAlgos, Options};
        let key_algos = match keys {
            0 => KeyAlgos::default(),
            1 => KeyAlgos(vec![KeyAlgo::imatch()]),
            2 => KeyAlgos(vec![KeyAlgo::PunctTitle]),
            _ => KeyAlgos(vec![KeyAlgo::keywords_check()]),
        };
        let o = Options {
            tw_phrases: flags[0],
            link_shape: flags[1],
            template_figures: flags[2],
            originals: flags[3],
            digests: flags[4],
            teasers: flags[5],
            reordered_lines: flags[6],
            furniture: flags[7],
            page_teasers: flags[8],
            site_templates: flags[9],
            batch_furniture: flags[12],
            same_site_templates: flags[13],
            site_knowledge: flags[14],
            excerpts: flags[15],
            headings: flags[16],
            excerpt_copies: flags[17],
            later_templates: flags[18],
            other_holders: flags[19],
            cut_excerpts: flags[20],
            first_links: flags[21],
            host_lines_join_one: flags[22],
            late_links: flags[23],
            left_out_figures: flags[24],
            heading_figures: flags[25],
            late_keys: flags[26],
            band_holders: flags[27],
            simhash_min_terms: min_terms,
            tight_clusters: flags[10],
            t2s: flags[11],
            reflow: flags[11],
            strong_resemblance_pct: strong,
            verify_resemblance_pct: resemblance,
            minhash_bands: bands,
            key_algos,
            ..Options::default()
        };
        proptest::prop_assert_eq!(o.rules_format(), ladder(&o));
        proptest::prop_assert_eq!(format_for(&o), format_value_of(ladder(&o)));
    }
}

/// The newest format is the newest row of the table of settings, and every row's `since` is
/// a format this binary writes.
#[test]
fn the_newest_format_is_the_tables() {
    let rows = crate::options::SETTING_TABLE;
    assert_eq!(
        rows.iter().map(|r| r.since).max(),
        Some(FormatVersion::CURRENT)
    );
    for r in rows {
        assert!(
            (FormatVersion::PLAIN..=FormatVersion::CURRENT).contains(&r.since),
            "{r:?}"
        );
        // A setting every store has needs no format of its own.
        if r.older.is_none() {
            assert_eq!(r.since, FormatVersion::PLAIN, "{r:?}");
        }
    }
}
