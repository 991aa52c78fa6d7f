//! A sliding window and a softcap as the window tests state them, and as
//! each side takes them: the library's options, the CPU emulation's
//! `ScoreOptions` and the f64 reference's `ScoreRule`.

use crate::emulate::ScoreOptions;
use kernels_gpu::window::KeyWindow;
use sdpa::Options;
use sdpa::reference::ScoreRule;

/// Keys before and after a row's position that it sees (`None`: every
/// one), causal masking, and the score cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// Keys before the row's position.
    pub left: Option<u32>,
    /// Keys after it.
    pub right: Option<u32>,
    /// Causal masking.
    pub causal: bool,
    /// The cap, if any.
    pub softcap: Option<f32>,
}

impl Scores {
    /// `opts` with this window, mask and cap.
    pub fn apply(&self, opts: Options) -> Options {
        let opts = opts.causal(self.causal).window(self.left, self.right);
        match self.softcap {
            Some(cap) => opts.softcap(cap),
            None => opts,
        }
    }

    /// As the CPU emulation takes them (causal folded into the window).
    pub fn emulated(&self) -> ScoreOptions {
        ScoreOptions { window: KeyWindow::new(self.left, self.right).with_causal(self.causal), softcap: self.softcap }
    }

    /// As the f64 reference takes them.
    pub fn rule(&self) -> ScoreRule {
        let side = |n: Option<u32>| n.map(|n| n as usize);
        ScoreRule {
            causal: self.causal,
            left: side(self.left),
            right: side(self.right),
            softcap: self.softcap.map(f64::from),
        }
    }
}
