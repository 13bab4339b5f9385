//! The one table of store settings. Each row names a setting of [`Options`](super::Options),
//! its type and default for new stores, the value a store made before the setting implies
//! (`older`; `none`: every store has it), the oldest store format that can hold a value other
//! than that one (`since`), and how a front end sets it (`set`: `flag`, a flag of its own
//! name, without `_pct`, whose help is the row's `help`; `algos`, through the list of algorithms; `hand`, by a value of its
//! own type, named here and defined where `Settings` is: the engine's `LearnedIdf`, a table
//! of the text layer, which this layer does not see). The doc comments are `Options`' field
//! documentation.
//!
//! Generated from it: `Options` (its fields, defaults, and the reading of a stored
//! `Options` that lacks a newer setting), the format rule (`Options::rules_format`),
//! [`SETTING_TABLE`](super::SETTING_TABLE), `Settings`' overrides with their names (which the
//! Python package sets by), and the command line's flags (name, help, default, type:
//! `cli/args.rs` `SettingFlags`). `fpdb stats`' lines and the reference's list are checked
//! against it by `tests/project/settings_places.rs`.

/// Calls `$m! { rows }` with the table's rows (see the module's documentation for their
/// form). Exported for the command line's flags; not an interface of the library.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_setting {
    ($m:ident) => {
        $m! {
            /// Use the `nshash` sentence-hash fingerprint.
            nshash: bool = true, older none, since 3, set algos;
            /// Use the 64-bit `simhash` fingerprint (off in new stores: with `band_holders`,
            /// MinHash finds what it found, at under half of a document's CPU; stores made with
            /// it keep it).
            simhash: bool = false, older none, since 3, set algos;
            /// Convert traditional Chinese to simplified before fingerprinting (default on;
            /// stores made before it was the default keep theirs, and stores made before the
            /// setting: off).
            t2s: bool = true, older (false), since 3, set flag,
                help "Convert traditional Chinese to simplified before fingerprinting (OpenCC t2s; \
                  only texts holding a traditional character are converted)";
            /// Fold Taiwan vocabulary onto mainland words before fingerprinting (软体 / 软件,
            /// 程式 / 程序: [`crate::text::fold_tw`]), so a copy converted with OpenCC `s2twp`
            /// matches its original (default on; stores made before this setting: off).
            tw_phrases: bool = true, older (false), since 6, set flag,
                help "Fold Taiwan vocabulary onto mainland words before fingerprinting (软体 / 软件, 程式 / \
                  程序; OpenCC's phrase tables), so a copy converted with s2twp matches";
            /// Number of longest sentences hashed per document (default 5).
            nshash_n: usize = 5, older none, since 3, set flag,
                help "nshash: number of longest sentences hashed per document";
            /// Hash used for sentences (default farmhash).
            nshash_hash: $crate::SentenceHash = SentenceHash::Farmhash, older none, since 3,
                set flag,
                help "nshash: sentence hash";
            /// A sentence counts only when it has at least this many letters/digits (default
            /// 10). Shorter ones ("谢谢。", "Click here.") are shared by unrelated documents.
            min_sentence_chars: usize = 10, older none, since 3, set flag,
                help "nshash: minimum letters/digits for a sentence to count";
            /// How many of a document's sentence hashes must be shared with one cluster before
            /// nshash calls it a match (capped by how many hashes the document has; default 1:
            /// candidates are verified).
            nshash_min_shared: usize = 1, older none, since 3, set flag,
                help "nshash: shared sentences needed for a candidate (capped by the document's count)";
            /// A candidate from either algorithm is accepted only when its similarity to the
            /// document ([`crate::fingerprint::similarity::similarity`]: shared sentences over
            /// the larger one's, or shingle resemblance where that decides) reaches this
            /// percentage (0 = no verification; default 60).
            verify_overlap_pct: u32 = 60, older none, since 3, set flag,
                help "Accept a candidate only when its similarity reaches this %: shared sentences \
                  over the larger document's, or character-shingle resemblance for short documents \
                  and (from 90%) re-wrapped ones (0 = off)";
            /// simhash: the features hashed (default words).
            simhash_features: $crate::SimhashFeatures = SimhashFeatures::Words,
                older (SimhashFeatures::Words), since 3, set flag,
                help "simhash: features: jieba words with TF-IDF weights, or character 3-grams";
            /// Robust to re-wrapped lines (default on; stores made before this setting: off):
            /// line breaks between two Chinese characters are removed before sentences and
            /// terms are cut, and every document (not only short ones) gets a character-shingle
            /// sketch, so a candidate whose shingles resemble the document's by at least 90% is
            /// accepted even when line breaks moved its sentences.
            reflow: bool = true, older (false), since 3, set flag,
                help "Robust to re-wrapped lines: line breaks inside Chinese text are ignored, and \
                  every document gets a character-shingle sketch that can verify a candidate (>= \
                  90% resemblance) whose sentences moved";
            /// simhash: stop words dropped from the terms (stores made before this setting:
            /// jieba).
            simhash_stopwords: $crate::Stopwords = Stopwords::Jieba, older (Stopwords::Jieba),
                since 3, set flag,
                help "simhash: stop words dropped from the terms: jieba's list (31 English words), \
                  Stopwords ISO Chinese + English, or none";
            /// simhash: IDF table (stores made before this setting: jieba).
            simhash_idf: $crate::IdfSource = IdfSource::Jieba, older (IdfSource::Jieba), since 3,
                set hand (LearnedIdf);
            /// Word segmentation of the word-based algorithms (stores made before this setting:
            /// jieba).
            segmenter: $crate::Segmenter = Segmenter::Jieba, older (Segmenter::Jieba), since 3,
                set flag,
                help "Word segmentation of simhash words and keyword keys: jieba's most probable \
                  route, or forward / backward maximum matching over jieba's dictionary";
            /// simhash: near-duplicate when the Hamming distance is <= this (inclusive;
            /// default 3).
            simhash_k: u32 = 3, older none, since 3, set flag,
                help "simhash: maximum Hamming distance, inclusive";
            /// simhash: a document of fewer terms than this has no simhash (default 8; 1: every
            /// document with a term has one, as in stores made before this setting). A few
            /// terms make a simhash that one changed term moves by ~10 bits, far past `k`: it
            /// finds only texts of the same few words, and at a large store mostly unrelated
            /// ones, which each cost a record read to reject. MinHash finds those short copies
            /// on their 4-grams: a store without MinHash bands keeps every simhash (the setting
            /// reads as 1 there).
            simhash_min_terms: u32 = 8, older (1), since 17, set flag,
                help "simhash: a document of fewer terms has no simhash (found by MinHash instead; \
                  without minhash this reads as 1)";
            /// simhash: number of bit blocks of the permuted-prefix index (derived from
            /// `expected_docs` when 0 at creation).
            simhash_blocks: u32 = 0, older none, since 3, set flag,
                help "simhash: blocks of the permuted index (default: chosen from --expected-docs)";
            /// The number of documents the store is sized for (chooses `simhash_blocks`).
            expected_docs: u64 = 10_000_000, older none, since 3, set flag,
                help "Number of documents the store is sized for";
            /// MinHash LSH over character 4-grams ([`crate::fingerprint::minhash::bands`]): band
            /// keys per document, each indexed like a sentence hash (0 = off; stores made
            /// before this setting: off). A candidate found through a band is verified like
            /// any other.
            minhash_bands: u32 = 8, older (0), since 4, set flag,
                help "minhash: LSH bands, each a key in the store (0 = no minhash)";
            /// MinHash LSH: minima hashed into one band key.
            minhash_rows: u32 = 4, older (0), since 4, set flag,
                help "minhash: rows (minima) per band";
            /// With `reflow`: the 4-gram resemblance at which a candidate of more than three
            /// sentences is accepted on its shingles alone, in percent, when the larger of the
            /// two documents has up to `SHORT_CHARS` characters (stores made before this
            /// setting: 90; see [`Options::resemblance_floor`]). Short articles lose a larger
            /// share of their 4-grams to a new title and an inserted ad than long texts lose
            /// to a revision.
            verify_resemblance_pct: u32 = 60, older (Options::LEGACY_RESEMBLANCE), since 4,
                set flag,
                help "With --reflow: a candidate of more than three sentences is also accepted when \
                  its character 4-gram resemblance reaches this % and the larger document has at \
                  most 1,200 characters (halfway to 90% up to 4,000, 90% beyond)";
            /// A document joins a cluster (and clusters merge through it) only when it also
            /// verifies against the cluster's first document, so clusters do not chain through
            /// third documents (stores made before this setting: off, single linkage).
            tight_clusters: bool = true, older (false), since 4, set flag,
                help "Join a cluster only when the document also verifies against the cluster's first \
                  document (no chaining through a third document); false = single linkage";
            /// With tight clusters: a candidate whose character 4-gram resemblance reaches
            /// this % and exceeds its sentence overlap by at least `STRONG_GAP` joins its
            /// cluster even when the cluster's first document does not verify: edits inside
            /// sentences (characters changed, lines re-wrapped) leave the 4-grams of a copy and
            /// break its sentences, while a window overlapping a third document shares whole
            /// sentences (0 = off; stores made before this setting: off).
            strong_resemblance_pct: u32 = 78, older (0), since 5, set flag,
                help "With --tight-clusters: a candidate whose character 4-gram resemblance reaches \
                  this % and exceeds its sentence overlap by 10 points (edits inside sentences, \
                  not a window sharing whole ones) joins its cluster even when the first document \
                  does not verify (0 = off)";
            /// With tight clusters: a verified candidate whose shared sentences sit as a copy's
            /// do (different inside the shared run, and not one document's own sentences
            /// before it and the other's after it, as two overlapping windows of a longer text:
            /// [`crate::fingerprint::similarity::Shape::copy`]) joins its cluster even when the
            /// cluster's first document does not verify. Records keep where each sentence sits
            /// (stores made before this setting: off).
            link_shape: bool = true, older (false), since 7, set flag,
                help "With --tight-clusters: a verified candidate whose shared sentences sit as a \
                  copy's do (different inside the shared run, and not one's own sentences before \
                  it and the other's after it, as two overlapping windows of a longer text) joins \
                  its cluster even when the first document does not verify; records keep where \
                  each sentence sits";
            /// Two documents whose figures differ are two reports filled into one template, not
            /// near-duplicates, whatever their wording shares
            /// ([`crate::fingerprint::figures`]): records keep a sketch of their figures
            /// (stores made before this setting: off).
            template_figures: bool = true, older (false), since 8, set flag,
                help "Two documents whose figures differ are two reports filled into one template, not \
                  near-duplicates: at least 3 figures, fewer than two thirds shared, and at least \
                  one differing figure per 400 characters of the shorter text; records keep a \
                  sketch of their figures";
            /// Each cluster names its original: its earliest member by publication time (the
            /// time its input gives, else its ingest time), ingest order breaking ties,
            /// whatever order the members arrived in; `duplicate_of` names it. Records keep
            /// their publication time and clusters their original (stores made before this
            /// setting: off, and `duplicate_of` names the first document ingested).
            originals: bool = true, older (false), since 9, set flag,
                help "Each cluster names its original: its earliest member by publication time (a time \
                  field, WARC-Date, the page's published time; else its ingest time), whatever \
                  order the members arrived in; `duplicate_of` names it";
            /// Records keep a 64-bit digest of the text as it was given
            /// (`crate::hash::text_digest`), so that a re-run sending a stored id with the
            /// same text is known as "already stored" without fingerprinting it again (stores
            /// made before this setting: off; their re-runs compare fingerprints instead). Not
            /// a fingerprint setting: nothing is matched on it.
            digests: bool = true, older (false), since 10, set flag,
                help "Records keep a 64-bit digest of their text as given, so that a re-run knows the \
                  documents already stored with the same text without fingerprinting them again";
            /// A teaser is a near-duplicate of its article: a candidate whose sentences are all
            /// in the document it is compared with, from that document's first sentence on, and
            /// make at least a third of it (three or more) is verified though the sentence
            /// overlap is under `verify_overlap_pct`
            /// ([`crate::fingerprint::similarity::teaser`]; stores made before this setting:
            /// off).
            teasers: bool = true, older (false), since 11, set flag,
                help "A teaser is a near-duplicate of its article: a document all of whose sentences \
                  (three or more) begin another and make a third of it is verified against it, \
                  though it holds only part of it";
            /// Reordered lines: a document of the same length as another (within
            /// `REORDERED_CHARS_PER_MILLE`), whose 4-grams resemble its at
            /// `REORDERED_RESEMBLANCE` or more, is verified on that resemblance whatever its
            /// length: a text hard-wrapped at a fixed width whose lines were put in another
            /// order has every sentence cut at a seam but keeps its characters (stores made
            /// before this setting: off, and a document over `LONG_CHARS` characters needs
            /// [`LONG_RESEMBLANCE`]).
            reordered_lines: bool = true, older (false), since 12, set flag,
                help "Reordered lines: a document of the same length as another whose 4-grams are 80% \
                  alike is verified on them whatever its length (a text hard-wrapped at a fixed \
                  width, its lines put in another order)";
            /// A site's furniture is left out of its pages: a line of a page's text (one block
            /// of an HTML page) that the store has seen on pages of the same host in two
            /// clusters is not fingerprinted ([`crate::text::lines`]; stores made before this
            /// setting: off, and every line counts). Pages without a URL are read whole.
            furniture: bool = true, older (false), since 13, set flag,
                help "A site's furniture is left out: a line of a page (one block of an HTML page) the \
                  store has seen on pages of the same host in three clusters is not fingerprinted";
            /// Teasers on pages ([`Options::teasers`] with the lines of a page around them):
            /// the teaser may hold sentences of its own, up to one in
            /// [`crate::fingerprint::similarity::TEASER_OWN_PARTS`] of those it shares (its
            /// page's video box, a pull-quote, a "read more" line), and its article up to
            /// [`crate::fingerprint::similarity::TEASER_HEAD_MOST`] sentences before the shared
            /// ones (a standfirst the teaser leaves out)
            /// ([`crate::fingerprint::similarity::teaser`]; stores made before this setting:
            /// off, and a teaser holds only its article's sentences, from the first on).
            page_teasers: bool = true, older (false), since 14, set flag,
                help "Teasers on pages: a teaser may hold sentences of its own page (up to one in \
                  eight of those it shares with its article: a video box, a pull-quote, a \"read \
                  more\" line), and its article up to two sentences before them (a standfirst)";
            /// A stored page keeps its site's template: the sentences of its lines that its
            /// host showed on an earlier page and that were not furniture yet (record version
            /// 8), and compared with a page of another host it leaves out those the page lacks,
            /// unless that leaves out more than half of its sentences (stores made before this
            /// setting: off, and a stored page is compared whole). Needs `furniture`.
            site_templates: bool = true, older (false), since 14, set flag,
                help "A stored page keeps its site's template (the lines its host showed on an earlier \
                  page), and a page of another host is compared with it without those lines' \
                  sentences that the page lacks";
            /// A site's furniture as one ingest batch shows it: a line that three pages of one
            /// host in the batch show, each with 100 letters and digits of lines that no other
            /// page of its host in the batch shows, is furniture for every page of the batch
            /// (and stored as furniture), whatever their order within it and whatever the store
            /// has seen (stores made before this setting: off, and a site's furniture is known
            /// only as the pages before a page made it so). Needs `furniture`.
            batch_furniture: bool = true, older (false), since 15, set flag,
                help "A site's furniture as one ingest batch shows it: a line that three pages of one \
                  host in a batch (--batch-size) show, each with text of its own, is furniture for \
                  every page of the batch, whatever their order";
            /// A page compared with another page of its own host leaves out, as against a page
            /// of another host, the sentences of its lines that the host showed on an earlier
            /// page (its site's template, not furniture yet) and the other page lacks, unless
            /// that leaves out more than half of its sentences: a site's block that the
            /// extractor took in beside a teaser or a short repost, and left around the
            /// article on the article's own page, is not the teaser's own text (stores made
            /// before this setting: off, and two pages of one host are compared whole). Needs
            /// `furniture`.
            same_site_templates: bool = true, older (false), since 16, set flag,
                help "A page compared with another page of its own site leaves out its lines that the \
                  site showed on an earlier page (its template) and the other page lacks, as \
                  against a page of another site";
            /// What the store learns of a site never hides a copy nor joins two articles: a
            /// line that is most of a page's main text, or that a member of the page's cluster
            /// on another host holds, is never furniture; a link that verifies only after a
            /// site's template lines were left out may join a page to one cluster, never merge
            /// two; and removing pages withdraws the lines they taught (each furniture line
            /// keeps the clusters and pages that made it so). Stores made before this setting:
            /// off. Needs `furniture`.
            site_knowledge: bool = true, older (false), since 18, set flag,
                help "What the store learns of a site never hides a copy nor joins two articles: a \
                  page's main text is never its site's furniture, a link through left-out template \
                  lines never merges two clusters, and removing pages withdraws what they taught";
            /// An excerpt is a near-duplicate of its article: a document that holds an
            /// article's first sentences in a run, two or more, and at most one sentence of
            /// its own (none beside two), whatever its share of the article (a teaser of a tenth of it), is
            /// verified against it. Stores made before this setting: off.
            excerpts: bool = true, older (false), since 19, set flag,
                help "An excerpt (an article's first sentences, two or more, with at most one of its \
                  own and none beside two) is a near-duplicate of its article, whatever its share \
                  of it";
            /// A page's headings are not its article's sentences: on a document with a URL,
            /// the lines before its first sentence that ends at a full stop (a headline, a
            /// byline, a dateline, a weather box; at most three, and no more than the sentences
            /// after them) count in verification, but a link's shape (copy, window, teaser,
            /// excerpt) leaves them out, `reflow` does not join them to the first sentence, and
            /// the opening sentence (`excerpts`) is the first after them: an excerpt of an
            /// article is its opening whatever headings the article's page shows. Stores made
            /// before this setting: off, and a page's headings are its first sentences.
            headings: bool = true, older (false), since 19, set flag,
                help "A page's headings (up to three lines before its first sentence that ends at a \
                  full stop: headline, byline, dateline) are not its sentences: an excerpt of an \
                  article is its opening whatever headings the article's page shows";
            /// A cluster of an article's excerpts that also holds copies of one of them is
            /// joined by the article: a member that does not verify as the article's excerpt
            /// itself, but is a strong copy of one that does (the same opening on a page whose
            /// own template lines are not yet known), counts as an excerpt, as it would have
            /// joined the article through that excerpt had the article come first. A page
            /// quoting the opening holds the excerpt, no copy of it, and still keeps the
            /// article out. Stores made before this setting: off. Needs `excerpts`.
            excerpt_copies: bool = true, older (false), since 19, set flag,
                help "A cluster of an article's excerpts is joined by the article when its other \
                  members are strong copies of one of them, whatever the order the pages came in";
            /// A stored page of another host that does not verify is compared again without
            /// the lines its site has shown on other pages since it was stored (its template,
            /// not yet furniture), as had they been shown before it: the store keeps the
            /// sentences of each line a site shows in two clusters or more, and removing the
            /// pages withdraws them. So a site's first page is found by a later copy on
            /// another site. Stores made before this setting: off. Needs `site_knowledge`.
            later_templates: bool = true, older (false), since 19, set flag,
                help "A stored page is compared without the template lines its site showed on other \
                  pages after it, so that a site's first page is found by a later copy elsewhere";
            /// A page's lookup reads a sentence hash's oldest holder and, among its first four
            /// holders, the first of another cluster than the oldest's: a page whose sentence
            /// two clusters hold (an article's opening, copied on pages cut apart by their
            /// template lines) is compared with both, not only with the older one, so the
            /// cluster it joins does not depend on which came first. The first later holder
            /// of the oldest's own cluster read before it is compared too: the oldest may be
            /// a page whose template lines keep it from verifying, a later copy beside it not.
            /// A text without a URL reads the oldest only. Stores made before this setting:
            /// off.
            other_holders: bool = true, older (false), since 19, set flag,
                help "A page's sentence held by two clusters proposes a document of each, not only \
                  the oldest holder";
            /// A page's last sentence that ends at its line's end, not at a sentence end (an
            /// excerpt cut short mid-sentence, a "Read more" line), is marked in its record's
            /// sentence order, and is not counted as the excerpt's own sentence: an opening of
            /// two sentences cut in its third is the article's excerpt, as one with the third
            /// whole is. A quotation of two sentences with a whole one of its own stays apart.
            /// Stores made before this setting: off.
            cut_excerpts: bool = true, older (false), since 19, set flag,
                help "A page's last sentence cut short (no sentence end) is not counted as an \
                  excerpt's own sentence";
            /// With tight clusters: a document that verifies against a member of a cluster,
            /// not as two overlapping windows, joins it when that member was linked to the
            /// cluster's first document at its own ingest, though the first document does not
            /// verify against the document: in the other order the member would have merged
            /// the two (it verifies against both firsts), so the cluster a page ends in does
            /// not depend on which came first. Needs `link_shape` (the window shape). Stores
            /// made before this setting: off.
            first_links: bool = true, older (false), since 19, set flag,
                help "With --tight-clusters: a document joins a cluster through a member linked to \
                  the cluster's first document at its ingest (not as two overlapping windows), as \
                  that member would have merged the two in the other order";
            /// A page's link to a stored page of its own host that shares only lines its host
            /// showed before, each of the two holding a sentence of its own beside them and
            /// the link not strong, never merges the clusters of two articles (as a link
            /// through left-out lines never does): two short articles put in one template
            /// share its lines, not an article. Two clusters reached only so, sharing those
            /// lines, join neither. Stores made before this setting: off. Needs
            /// `site_knowledge`.
            host_lines_join_one: bool = true, older (false), since 19, set flag,
                help "A page's link to a page of its own host through lines the host showed \
                  before only (each with a sentence of its own) never merges two clusters";
            /// After a batch, the pages of the clusters that made lines their site's furniture
            /// in it are checked again without those lines, as their ingest would have
            /// compared them had the store known them: a page alone in its cluster is looked
            /// up again and joins the one cluster it then links to (never two); a cluster of
            /// a few pages whose pages of one host were linked only through those lines is
            /// split; the pages of such a cluster are looked up again (also without the lines
            /// their site has shown in two clusters, their template, after a batch in which
            /// such a line reached its second cluster), and a page alone that one of them then
            /// links to (and to no other cluster) joins it. So what a store finds does not hang on whether a page came before or
            /// after the pages that taught its site's furniture. Stores made before this
            /// setting: off. Needs `site_knowledge`.
            late_links: bool = true, older (false), since 19, set flag,
                help "After a batch, pages whose lines became furniture in it are checked again \
                  without them: a page alone joins the one cluster it links to, and pages of one \
                  site linked only through those lines are split apart";
            /// A page compared without lines left out of it (its site's furniture or template,
            /// as `furniture`, `site_templates` and `late_links` leave them out; a stored page
            /// as its site taught since it was stored) is not judged by its figures (the
            /// template-instance rule of `template_figures`): its figures are those of its whole
            /// text, the left-out lines' included, and a record does not say which line held
            /// which. Its sentences decide. Stores made before this setting: off.
            left_out_figures: bool = true, older (false), since 19, set flag,
                help "A page compared without lines left out of it (its site's furniture or \
                  template) is not judged by its figures, which are its whole text's";
            /// A page's headings (`headings`: a headline, a byline, a dateline above its first
            /// sentence) are not counted in its figures (`template_figures`): a date or a count
            /// of comments there is its page's, not its text's, and two copies of one article
            /// dated apart are not two reports of one template. Stores made before this
            /// setting: off. Needs `headings`.
            heading_figures: bool = true, older (false), since 19, set flag,
                help "A page's headings (headline, byline, dateline) are not counted in its figures";
            /// A page's record keeps the high halves of its sentence hashes (record version
            /// 10), so that once every sentence it is posted under is its site's furniture (a
            /// page whose first lines and longest sentences are its template, stored before
            /// the template was known), the late links post it under its other sentences, the
            /// first ones as they sit in its text: a later copy finds it by them. Stores made
            /// before this setting: off. Needs `late_links`.
            late_keys: bool = true, older (false), since 20, set flag,
                help "Once the sentences a page is posted under are all its site's furniture, it \
                  is posted under its other sentences (its record keeps their hashes)";
            /// A MinHash band key proposes every holder a lookup reads of it, up to four (in
            /// seq order, stopping after the first of another cluster than the oldest's), not
            /// only its oldest: a copy whose sentences a re-wrap cut apart may verify against
            /// a later holder of its bands (the member it copies) and not against the oldest.
            /// Stores made before this setting: off.
            band_holders: bool = true, older (false), since 20, set flag,
                help "A MinHash band key proposes each of its first four holders, not only the \
                  oldest";
            /// Exact-key algorithms of the literature (I-Match, keyword fingerprint, segment
            /// signatures): keys indexed like sentence hashes (none by default; stores made
            /// before this setting: none). Some of them need format 5
            /// ([`KeyAlgos::since`]).
            key_algos: $crate::KeyAlgos = KeyAlgos::default(), older (KeyAlgos::default()), since 4,
                set algos;
        }
    };
}
