//! A stored page of another host that does not verify against the page looked up, checked
//! again with what its site taught since it was stored (stores with `site_knowledge`): the
//! sentences of the lines its site has made furniture since, left out, and (stores with
//! `later_templates`) those of the lines it has shown in two clusters or more, its template as
//! had they been shown before it. So a site's first page, stored before its furniture or its
//! template was known, is found by a later copy on another site.

use super::checked::Checked;
use super::furniture::{SeenInBatch, FURNITURE_SENTENCE};
use super::sites::Sites;
use crate::error::Result;
use crate::fingerprint::Fingerprints;
use crate::store::schema;

impl Sites<'_> {
    /// `fps` checked against stored record `rec` ([`Checked::of`]); in stores with
    /// `site_knowledge`, a candidate of another host that does not verify so is checked again
    /// without the sentences the page lacks that its site has made furniture since it was
    /// stored ([`FURNITURE_SENTENCE`]), as it would have been stored had its furniture been
    /// known then: furniture is no text of either page, as the page's own is left out of it.
    /// In stores with `later_templates`, the sentences the page lacks of lines its site has
    /// shown in two clusters or more since are its template as had they been shown before
    /// it (left out as `compared.rs` leaves a stored template out). What a batch's
    /// earlier documents taught (`written`) counts before the store, as it would one document
    /// at a time. Costs a point read per such sentence of a candidate that did not verify, on
    /// pages only.
    pub(super) fn checked(
        &self,
        fps: &Fingerprints,
        rec: &schema::DocRecord,
        written: &SeenInBatch,
    ) -> Result<Checked> {
        let c = Checked::of(self.opts, fps, rec);
        if c.overlap >= self.opts.verify_threshold() || !self.opts.site_knowledge {
            return Ok(c);
        }
        let mine = fps.compared_host();
        let (Some(mine), Some(url)) = (mine, rec.url.as_deref()) else {
            return Ok(c);
        };
        let Some(site) = crate::text::sites::site_key(url, None)
            .filter(|&s| !crate::text::sites::same_host(s, mine))
        else {
            return Ok(c);
        };
        let (mut furniture, mut template) = (Vec::new(), Vec::new());
        for &h in &rec.sketch {
            if fps.sketch.binary_search(&h).is_ok() {
                continue;
            }
            match self.standing_in(site, FURNITURE_SENTENCE | u64::from(h), written)? {
                Some(true) => furniture.push(h),
                Some(false)
                    if self.opts.later_templates && rec.template.binary_search(&h).is_err() =>
                {
                    template.push(h);
                }
                _ => {}
            }
        }
        // Sketches are sorted, so `furniture` and `template` are.
        let kept = |h: &u32| furniture.binary_search(h).is_err();
        if (furniture.is_empty() && template.is_empty())
            || rec.sketch.iter().filter(|h| kept(h)).count() < 2
        {
            return Ok(c);
        }
        let mut without = rec.clone();
        (without.sketch, without.order) =
            super::compared::sketch_without(rec, &furniture, self.opts.cut_excerpts);
        without.template.retain(kept);
        if self.opts.left_out_figures {
            // Its figures are its whole text's, the lines left out included.
            without.figures.clear();
        }
        if !template.is_empty() {
            // Lines its site showed on other pages since it was stored: its template, as
            // had they been shown before it.
            without.template.extend(template);
            without.template.sort_unstable();
            without.template.dedup();
        }
        Ok(Checked::of(self.opts, fps, &without))
    }
}
