//! A call's score options as FlashAttention takes them, `window_size =
//! (left, right)` (-1: no limit on that side) and `softcap` (0: off),
//! checked and turned into the library's `Options::window` and
//! `Options::softcap`.

use crate::args::ArgError;
use sdpa::Options;

/// The checked score options: the keys before and after its position that
/// each query row sees (`None`: no limit) and the score cap's bits, where
/// the scores are capped. Hashable, for the plan cache's key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Scores {
    /// Keys before a row's position it sees.
    left: Option<u32>,
    /// Keys after a row's position it sees.
    right: Option<u32>,
    /// The cap's f32 bits.
    softcap: Option<u32>,
}

impl Scores {
    /// FlashAttention's `window_size` and `softcap`: each side -1 (no
    /// limit) or a count of keys at or above 0 (a count past `u32::MAX`
    /// limits nothing either); the cap 0 (off) or finite and above 0 (the
    /// library checks its upper limit when it plans).
    pub fn new((left, right): (i64, i64), softcap: f64) -> Result<Scores, ArgError> {
        let side = |what, n: i64| match n {
            -1 => Ok(None),
            0.. => Ok(Some(u32::try_from(n).unwrap_or(u32::MAX))),
            _ => Err(ArgError::OutOfRange { what, expected: "-1 (no limit) or at least 0", value: n.to_string() }),
        };
        let (left, right) = (side("window_size[0]", left)?, side("window_size[1]", right)?);
        if !(softcap.is_finite() && softcap >= 0.0) {
            let expected = "finite and at least 0 (0: no cap)";
            return Err(ArgError::OutOfRange { what: "softcap", expected, value: softcap.to_string() });
        }
        let softcap = (softcap > 0.0).then(|| (softcap as f32).to_bits());
        Ok(Scores { left, right, softcap })
    }

    /// `opts` with this window and cap (unchanged for the defaults: the
    /// window of no limits is every key).
    pub fn apply(self, opts: Options) -> Options {
        let opts = opts.window(self.left, self.right);
        match self.softcap {
            Some(bits) => opts.softcap(f32::from_bits(bits)),
            None => opts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flash_attentions_defaults_ask_for_nothing() {
        let scores = Scores::new((-1, -1), 0.0).unwrap();
        assert_eq!(scores, Scores::default());
        assert_eq!(scores.apply(Options::new()), Options::new());
    }

    #[test]
    fn a_window_and_a_cap_become_the_librarys_options() {
        let opts = Scores::new((128, 0), 30.0).unwrap().apply(Options::new().causal(true));
        assert_eq!(opts, Options::new().causal(true).window(Some(128), Some(0)).softcap(30.0));
        let opts = Scores::new((-1, 7), 0.0).unwrap().apply(Options::new());
        assert_eq!(opts, Options::new().window(None, Some(7)));
        assert_eq!(opts.softcap, None);
    }

    #[test]
    fn a_side_past_u32_limits_nothing() {
        let opts = Scores::new((1 << 40, 0), 0.0).unwrap().apply(Options::new());
        assert!(opts.window.left >= kernels_gpu::window::KeyWindow::UNBOUNDED);
        assert_eq!(opts.window.right, 0);
    }

    #[test]
    fn sides_below_minus_one_are_refused() {
        let e = Scores::new((-2, 0), 0.0).unwrap_err();
        assert_eq!(e.to_string(), "window_size[0] must be -1 (no limit) or at least 0, got -2");
        let e = Scores::new((3, -5), 0.0).unwrap_err();
        assert_eq!(e.to_string(), "window_size[1] must be -1 (no limit) or at least 0, got -5");
        assert!(!e.is_type_error());
    }

    #[test]
    fn negative_and_non_finite_caps_are_refused() {
        for cap in [-1.0, f64::NAN, f64::INFINITY] {
            let e = Scores::new((-1, -1), cap).unwrap_err();
            assert_eq!(e.to_string(), format!("softcap must be finite and at least 0 (0: no cap), got {cap}"));
        }
    }
}
