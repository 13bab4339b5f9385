//! The decision rules on labelled pairs and generated sites: the quality gate and rules,
//! furniture, site knowledge and a shared host's publishers, teasers, a sentence held by two
//! clusters, reordered lines, originals, simhash's terms, reflow, first links,
//! links through a host's own lines, figures of pages with lines left out
//! and of a page's headings.

#[path = "../common/mod.rs"]
mod common;

mod band_holders;
mod cut_excerpts;
mod first_links;
mod furniture;
mod holders;
mod host_lines;
mod late_joins;
mod late_keys;
mod left_out_figures;
mod originals;
mod publishers;
mod quality_gate;
mod quality_rules;
mod reflow;
mod reordered_lines;
mod simhash_terms;
mod site_knowledge;
mod teasers;
