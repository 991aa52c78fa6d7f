//! The kernel images embedded at build time by `build.rs`: PTX for every
//! arch, and a cubin wherever ptxas was available during the build.

/// One compiled form of the kernel crate.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    /// Arch name, e.g. `sm_90a`.
    pub arch: &'static str,
    /// Compute capability the arch targets.
    pub capability: (i32, i32),
    /// The PTX text (the driver can JIT it).
    pub ptx: &'static str,
    /// The cubin from ptxas, when the build had ptxas.
    pub cubin: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/embedded_images.rs"));

/// Every embedded image, preferred first.
pub fn images() -> &'static [Image] {
    IMAGES
}

/// How a device will load the kernels.
#[derive(Clone, Copy, Debug)]
pub enum Load {
    /// A cubin built for exactly this device's arch.
    Cubin(&'static Image),
    /// PTX the driver compiles at load time.
    Ptx(&'static Image),
}

impl Load {
    /// A short description, e.g. "sm_90a cubin".
    pub fn describe(&self) -> String {
        match self {
            Load::Cubin(i) => format!("{} cubin", i.arch),
            Load::Ptx(i) => format!("{} PTX (JIT)", i.arch),
        }
    }
}

/// Picks the image for a device of compute capability `cc`: the cubin of
/// the same capability if there is one, else the PTX of the same capability,
/// else the PTX of the newest portable arch (not an `a` arch) not newer than
/// the device; `None` when the device is older than every arch.
pub fn select(cc: (i32, i32)) -> Option<Load> {
    if let Some(img) = images().iter().find(|i| i.capability == cc) {
        return Some(match img.cubin {
            Some(_) => Load::Cubin(img),
            None => Load::Ptx(img),
        });
    }
    images().iter().filter(|i| !i.arch.ends_with('a') && i.capability <= cc).max_by_key(|i| i.capability).map(Load::Ptx)
}

/// What built this binary, for results files.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BuildInfo {
    /// `git rev-parse --short=12 HEAD` at build time, `-dirty` if tracked files differed.
    pub commit: &'static str,
    /// `rustc -V` of the toolchain that built the kernels.
    pub toolchain: &'static str,
    /// The ptxas release that made the cubins, or "none (PTX only)".
    pub ptxas: &'static str,
}

/// The build metadata recorded by `build.rs`.
pub const BUILD: BuildInfo = BuildInfo {
    commit: env!("SDPA_BUILD_COMMIT"),
    toolchain: env!("SDPA_BUILD_TOOLCHAIN"),
    ptxas: env!("SDPA_BUILD_PTXAS"),
};
