//! The bundled font: charts draw text with DejaVu Sans compiled into the binary, so
//! no system font or fontconfig is needed. (DejaVu fonts licence: assets/.)

use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Font family name charts use.
pub(crate) const FAMILY: &str = "rentix-sans";

/// Registers the bundled font with plotters (once per process).
pub(crate) fn ensure_font() {
    REGISTER.call_once(|| {
        // The bundled file is a valid TrueType font; a failure here would leave
        // charts without text, which the chart tests would catch.
        let _ = plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, FONT);
    });
}
