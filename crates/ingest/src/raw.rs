//! A raw observation: the canonical fields as text, before any validation.

use std::borrow::Cow;

/// Required canonical fields.
pub(crate) use rentix_core::REQUIRED_COLUMNS as REQUIRED_FIELDS;

/// One candidate observation as text. An empty field is `None`. Built by a
/// [`crate::Mapping`] from one input record, borrowing its fields where a field is
/// one column as it stands (no copy per field per row); validated by
/// the normalizer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawObservation<'a> {
    /// `trade`, `firm` or `listing` (required).
    pub kind: Option<Cow<'a, str>>,
    /// RFC 3339 with an offset, `YYYY-MM-DD HH:MM:SS+hh:mm`, or a date (required).
    pub observed_at: Option<Cow<'a, str>>,
    /// The contributor, as spelled (required).
    pub source: Option<Cow<'a, str>>,
    /// A canonical GPU id or an alias (required).
    pub gpu: Option<Cow<'a, str>>,
    /// `bare-metal`, `vm`, `container` or `managed-cluster` (required).
    pub scope: Option<Cow<'a, str>>,
    /// `spot`, `on-demand` or a reserved term, `1w` .. `3y` (required).
    pub term: Option<Cow<'a, str>>,
    /// The quoted price, a finite number > 0 in `price_unit` and `currency`
    /// (required).
    pub price: Option<Cow<'a, str>>,
    /// `gpu_hour`, `node_hour`, `instance_hour`, `gpu_month` or `node_month`
    /// (required).
    pub price_unit: Option<Cow<'a, str>>,
    /// `USD` or a currency of the FX table (required).
    pub currency: Option<Cow<'a, str>>,
    /// The source's own id for the observation; without one, duplicates are found
    /// by content.
    pub obs_id: Option<Cow<'a, str>>,
    /// Volume in GPU-hours, >= 0; required and > 0 for a trade.
    pub quantity_gpu_hours: Option<Cow<'a, str>>,
    /// GPUs per node or instance, a whole number >= 1; required for node and
    /// instance prices.
    pub gpus_per_unit: Option<Cow<'a, str>>,
    /// Region, lowercased into the grade's `@region`.
    pub region: Option<Cow<'a, str>>,
    /// Interconnect, kept as text.
    pub interconnect: Option<Cow<'a, str>>,
    /// GPUs in the cluster offered, a whole number >= 1.
    pub cluster_gpus: Option<Cow<'a, str>>,
    /// `platinum`, `gold`, `silver`, `bronze` or `underperform`; absent, the
    /// ratings table's tier on the date, if any.
    pub operator_tier: Option<Cow<'a, str>>,
    /// An amount paid up front per unit quoted, >= 0, amortized over the term.
    pub upfront: Option<Cow<'a, str>>,
    /// The day the term starts (a date or timestamp): it picks the month a monthly
    /// price is spread over.
    pub term_start: Option<Cow<'a, str>>,
}

impl<'a> RawObservation<'a> {
    /// Every field empty again, to be filled for another record.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Sets a canonical field by name (trimmed; empty becomes `None`); returns false
    /// for a name that is not a canonical field.
    pub fn set(&mut self, field: &str, value: Option<Cow<'a, str>>) -> bool {
        match field_position(field) {
            Some(at) => {
                self.set_at(at, value);
                true
            }
            None => false,
        }
    }

    /// Sets the field at `at`, its position in [`rentix_core::CANONICAL_COLUMNS`]
    /// (a mapping resolves names to positions once per file, not once per row).
    pub fn set_at(&mut self, at: usize, value: Option<Cow<'a, str>>) {
        let value = value
            .map(|v| match v {
                Cow::Borrowed(b) => Cow::Borrowed(trim(b)),
                Cow::Owned(o) if trim(&o).len() == o.len() => Cow::Owned(o),
                Cow::Owned(o) => Cow::Owned(trim(&o).to_string()),
            })
            .filter(|v| !v.is_empty());
        self.put_trimmed(at, value);
    }

    /// [`Self::set_at`] for a value already trimmed and not empty (or `None`).
    pub(crate) fn put_trimmed(&mut self, at: usize, value: Option<Cow<'a, str>>) {
        let slot = match at {
            0 => &mut self.obs_id,
            1 => &mut self.kind,
            2 => &mut self.observed_at,
            3 => &mut self.source,
            4 => &mut self.gpu,
            5 => &mut self.scope,
            6 => &mut self.term,
            7 => &mut self.price,
            8 => &mut self.price_unit,
            9 => &mut self.currency,
            10 => &mut self.quantity_gpu_hours,
            11 => &mut self.gpus_per_unit,
            12 => &mut self.region,
            13 => &mut self.interconnect,
            14 => &mut self.cluster_gpus,
            15 => &mut self.operator_tier,
            16 => &mut self.upfront,
            17 => &mut self.term_start,
            _ => return,
        };
        *slot = value;
    }
}

impl RawObservation<'_> {
    /// The first field longer than `limit` bytes: its name and length.
    pub fn too_long(&self, limit: usize) -> Option<(&'static str, usize)> {
        self.named()
            .find_map(|(name, v)| Some(v.len()).filter(|&n| n > limit).map(|n| (name, n)))
    }

    /// The first field holding a control character (U+0000 to U+001F, U+007F to
    /// U+009F: a NUL, a line break or tab inside a cell, an escape): its name, the
    /// character's byte offset and the character. Such a source or GPU name would
    /// reach the store, receipts and fixings files, where it ends a C string or
    /// breaks a line.
    pub fn control_character(&self) -> Option<(&'static str, usize, char)> {
        self.named().find_map(|(name, v)| {
            v.char_indices()
                .find(|(_, c)| c.is_control())
                .map(|(at, c)| (name, at, c))
        })
    }

    /// Each canonical field that is given, with its name.
    fn named(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let fields = [
            &self.obs_id,
            &self.kind,
            &self.observed_at,
            &self.source,
            &self.gpu,
            &self.scope,
            &self.term,
            &self.price,
            &self.price_unit,
            &self.currency,
            &self.quantity_gpu_hours,
            &self.gpus_per_unit,
            &self.region,
            &self.interconnect,
            &self.cluster_gpus,
            &self.operator_tier,
            &self.upfront,
            &self.term_start,
        ];
        rentix_core::CANONICAL_COLUMNS
            .iter()
            .zip(fields)
            .filter_map(|(name, v)| v.as_deref().map(|v| (*name, v)))
    }
}

/// The position of canonical field `name` in [`rentix_core::CANONICAL_COLUMNS`].
pub(crate) fn field_position(name: &str) -> Option<usize> {
    rentix_core::CANONICAL_COLUMNS
        .iter()
        .position(|c| *c == name)
}

/// Whether `name` is a field of the canonical observations layout.
pub(crate) fn is_canonical_field(name: &str) -> bool {
    rentix_core::CANONICAL_COLUMNS.contains(&name)
}

/// `text` without leading and trailing white space, as [`str::trim`] gives it:
/// a cell that starts and ends with a printable ASCII character (nearly every
/// cell) is returned as it is without walking it as characters (two trims per
/// field were 2.4% of a one-shot's CPU, issue 48).
pub(crate) fn trim(text: &str) -> &str {
    // White space in ASCII is tab to carriage return and the space; every other
    // white space character is encoded with bytes >= 0x80.
    let clear = |b: u8| b.is_ascii() && !matches!(b, b'\t'..=b'\r' | b' ');
    match text.as_bytes() {
        [] => text,
        [first, .., last] if clear(*first) && clear(*last) => text,
        [only] if clear(*only) => text,
        _ => text.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The shortcut trims what `str::trim` trims: white space of every kind
        /// (ASCII, the vertical tab, no-break and ideographic spaces) at either end.
        #[test]
        fn trim_is_str_trim(
            s in "[ \t\n\u{0b}\u{0c}\r\u{85}\u{a0}\u{3000}\u{1c}a-z,é]{0,6}"
        ) {
            proptest::prop_assert_eq!(trim(&s), s.trim());
        }
    }

    #[test]
    fn trim_keeps_a_clean_cell_and_trims_the_rest() {
        for (cell, want) in [
            ("", ""),
            ("a", "a"),
            (" ", ""),
            ("\u{0b}x", "x"),
            ("x\u{a0}", "x"),
            ("\u{3000}1.5 ", "1.5"),
            ("\u{1c}", "\u{1c}"),
            ("é", "é"),
        ] {
            assert_eq!(trim(cell), want, "{cell:?}");
        }
    }

    #[test]
    fn every_canonical_field_is_set_by_its_name() {
        for name in rentix_core::CANONICAL_COLUMNS {
            let mut r = RawObservation::default();
            assert!(r.set(name, Some(Cow::Borrowed(name))));
            let fields = [
                ("obs_id", &r.obs_id),
                ("kind", &r.kind),
                ("observed_at", &r.observed_at),
                ("source", &r.source),
                ("gpu", &r.gpu),
                ("scope", &r.scope),
                ("term", &r.term),
                ("price", &r.price),
                ("price_unit", &r.price_unit),
                ("currency", &r.currency),
                ("quantity_gpu_hours", &r.quantity_gpu_hours),
                ("gpus_per_unit", &r.gpus_per_unit),
                ("region", &r.region),
                ("interconnect", &r.interconnect),
                ("cluster_gpus", &r.cluster_gpus),
                ("operator_tier", &r.operator_tier),
                ("upfront", &r.upfront),
                ("term_start", &r.term_start),
            ];
            for (field, value) in fields {
                let expected = (field == name).then_some(name);
                assert_eq!(
                    value.as_deref(),
                    expected,
                    "set({name:?}) and field {field}"
                );
            }
        }
        assert!(!RawObservation::default().set("price_usd", Some("1".into())));
    }
}
