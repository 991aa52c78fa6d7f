//! The kernel images embedded at build time by `build.rs`: by default the
//! images shipped in the crate's `images/` folder (a cubin for every arch,
//! PTX for the portable ones), or, when the kernels are built from their
//! sources, PTX for every arch and a cubin wherever ptxas was available;
//! and which one a device loads.

use crate::error::AttnError;
use cudarc::nvrtc::Ptx;

/// One compiled form of the kernel crate.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    /// Arch name, e.g. `sm_90a`.
    pub arch: &'static str,
    /// Compute capability the arch targets.
    pub capability: (i32, i32),
    /// The PTX text (the driver can JIT it), where it is embedded: the
    /// shipped images leave out the PTX of arch-specific archs, which runs
    /// only where their cubin does.
    pub ptx: Option<&'static str>,
    /// The cubin from ptxas, where the build had one.
    pub cubin: Option<&'static [u8]>,
}

impl Image {
    /// Whether its arch is arch-specific (`sm_90a`): its code runs on
    /// devices of exactly its capability, and neither its PTX nor its cubin
    /// on any other.
    pub fn arch_specific(&self) -> bool {
        self.arch.ends_with('a')
    }

    /// What it holds, e.g. "cubin (173088 bytes) + PTX (436336 bytes)".
    pub fn describe(&self) -> String {
        match (self.cubin, self.ptx) {
            (Some(cubin), Some(ptx)) => format!("cubin ({} bytes) + PTX ({} bytes)", cubin.len(), ptx.len()),
            (Some(cubin), None) => format!("cubin only ({} bytes)", cubin.len()),
            (None, Some(ptx)) => format!("PTX only ({} bytes)", ptx.len()),
            (None, None) => "nothing".to_string(),
        }
    }
}

/// Where the embedded images came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ImageOrigin {
    /// The images shipped with the crate (`images/`, made by `cargo xtask
    /// images` and checked against the kernel sources by CI).
    Shipped,
    /// Built from the kernel sources by this build (the `build-kernels`
    /// feature or `SDPA_BUILD_KERNELS=1`, as in this repository's workspace).
    BuiltFromSources,
}

/// The arch of the image with the Hopper-only kernels.
const SM90A: &str = "sm_90a";

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
    /// The image loaded, in either form.
    pub fn image(&self) -> &'static Image {
        match self {
            Load::Cubin(image) | Load::Ptx(image) => image,
        }
    }

    /// Whether it is the sm_90a image, the only one that holds the
    /// Hopper-only kernels (`KernelInfo::sm90a_only`).
    pub fn is_sm90a(&self) -> bool {
        self.image().arch == SM90A
    }

    /// The module the driver loads: the cubin, or the PTX it compiles.
    /// [`select`] and [`choose`] name the PTX only of an image that has it:
    /// the PTX of every arch where the build had no ptxas, of the portable
    /// archs in the shipped images.
    pub fn module(&self) -> Ptx {
        match self {
            Load::Cubin(img) => Ptx::from_binary(img.cubin.unwrap_or_default().to_vec()),
            Load::Ptx(img) => Ptx::from_src(img.ptx.unwrap_or_default()),
        }
    }

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
        return Some(of_capability(img, cc));
    }
    images().iter().filter(|i| !i.arch_specific() && i.capability <= cc).max_by_key(|i| i.capability).map(Load::Ptx)
}

/// `img` on a device of capability `cc` that can run it: its cubin where the
/// capability is the image's own and the build had ptxas (a cubin runs
/// only on the arch it was made for), else its PTX, which the driver
/// compiles for the device.
///
/// Every image has one or the other, and the PTX wherever it has no cubin
/// for the device: the build embeds PTX for every arch when it has no
/// ptxas, and the shipped images leave out only arch-specific PTX, whose
/// cubin is for the one capability that PTX runs on.
fn of_capability(img: &'static Image, cc: (i32, i32)) -> Load {
    match img.cubin {
        Some(_) if img.capability == cc => Load::Cubin(img),
        _ => Load::Ptx(img),
    }
}

/// The environment variable [`ImageChoice::from_env`] reads (and so
/// `Attention::new`): an arch, e.g. `SDPA_IMAGE=sm_89`, or `auto`.
pub const IMAGE_ENV: &str = "SDPA_IMAGE";

/// Which embedded image `Attention` loads.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ImageChoice {
    /// The image made for the device ([`select`]).
    #[default]
    Auto,
    /// The image of this arch (an [`Image::arch`], e.g. `sm_89`) on a device
    /// that can run it ([`choose`]): e.g. the sm_89 kernels on a Hopper GPU,
    /// from their PTX.
    Arch(String),
}

impl ImageChoice {
    /// The name of [`ImageChoice::Auto`].
    pub const AUTO: &'static str = "auto";

    /// The image of `arch`, e.g. `ImageChoice::arch("sm_89")`.
    pub fn arch(arch: &str) -> ImageChoice {
        ImageChoice::Arch(arch.to_string())
    }

    /// `auto` (or an empty name) is [`ImageChoice::Auto`], anything else an
    /// arch ([`choose`] refuses names no image has).
    pub fn from_name(name: &str) -> ImageChoice {
        match name.trim() {
            "" | ImageChoice::AUTO => ImageChoice::Auto,
            arch => ImageChoice::arch(arch),
        }
    }

    /// The choice of [`IMAGE_ENV`] (`SDPA_IMAGE`), by [`ImageChoice::from_name`];
    /// [`ImageChoice::Auto`] when it is not set.
    pub fn from_env() -> ImageChoice {
        std::env::var_os(IMAGE_ENV).map_or(ImageChoice::Auto, |v| ImageChoice::from_name(&v.to_string_lossy()))
    }

    /// Its name: `auto` or the arch.
    pub fn name(&self) -> &str {
        match self {
            ImageChoice::Auto => ImageChoice::AUTO,
            ImageChoice::Arch(arch) => arch,
        }
    }
}

/// The image `choice` names for device `device` of compute capability `cc`,
/// and how it loads there:
/// - [`ImageChoice::Auto`]: [`select`]'s; [`AttnError::UnsupportedDevice`]
///   where no image runs on the device;
/// - [`ImageChoice::Arch`]: that image; its cubin only on a device of its
///   own capability, elsewhere its PTX. [`AttnError::UnknownImage`] for an
///   arch no image has; [`AttnError::ImageUnsupported`] for an image newer
///   than the device, or an arch-specific one ([`Image::arch_specific`])
///   on a device of another capability.
pub fn choose(choice: &ImageChoice, device: &str, cc: (i32, i32)) -> Result<Load, AttnError> {
    let arch = match choice {
        ImageChoice::Auto => {
            return select(cc).ok_or_else(|| AttnError::UnsupportedDevice {
                name: device.to_string(),
                major: cc.0,
                minor: cc.1,
            });
        }
        ImageChoice::Arch(arch) => arch,
    };
    let img = images().iter().find(|i| i.arch == arch).ok_or_else(|| AttnError::UnknownImage {
        name: arch.clone(),
        known: images().iter().map(|i| i.arch).collect::<Vec<_>>().join(", "),
    })?;
    let refuse = |reason: String| AttnError::ImageUnsupported {
        arch: img.arch,
        device: device.to_string(),
        major: cc.0,
        minor: cc.1,
        reason,
    };
    let (major, minor) = img.capability;
    if img.arch_specific() && img.capability != cc {
        return Err(refuse(format!("an arch-specific image runs only on compute capability {major}.{minor}")));
    }
    if img.capability > cc {
        return Err(refuse(format!("it needs compute capability {major}.{minor} or newer")));
    }
    Ok(of_capability(img, cc))
}

/// What built this binary, for results files.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BuildInfo {
    /// Where the kernel images came from.
    pub images: ImageOrigin,
    /// `git rev-parse --short=12 HEAD` at build time, `-dirty` if tracked
    /// files differed; for a packaged crate, the commit it was packaged
    /// from; "unknown" when neither is known.
    pub commit: &'static str,
    /// `rustc -V` of the toolchain that built the kernels (the shipped
    /// images' manifest says which).
    pub toolchain: &'static str,
    /// The ptxas release that made the cubins, or "none (PTX only)".
    pub ptxas: &'static str,
}

/// The build metadata recorded by `build.rs`.
pub const BUILD: BuildInfo = BuildInfo {
    images: ORIGIN,
    commit: env!("SDPA_BUILD_COMMIT"),
    toolchain: env!("SDPA_BUILD_TOOLCHAIN"),
    ptxas: env!("SDPA_BUILD_PTXAS"),
};
