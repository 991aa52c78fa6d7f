//! Which of a workspace's tensor-map slots holds which maps.
//!
//! A set of tensor maps is a pure function of its key (the maps' dimensions
//! and the Q, K, V addresses), so a slot, once written, never needs other
//! bytes for the same key: runs look their key up and reuse the slot. A
//! slot that a CUDA-graph capture used is pinned: graphs may replay it for
//! the workspace's life, so it is never given to other maps. At most
//! `pinnable` slots are pinned, so a run outside capture always finds a
//! slot it may write.

use crate::error::AttnError;

/// Where a run's maps are, and what it must do before its kernel reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MapSlot {
    /// Slot `.0` holds the maps on the device (written in stream order by a
    /// run outside capture): nothing to copy.
    Ready(usize),
    /// Slot `.0` was given the maps by a capture: its pinned host source
    /// holds them, and the device slot holds them only once a graph that
    /// copies them has replayed. Copy the source in (queued outside
    /// capture, then [`MapSlots::written`]; recorded inside capture).
    Staged(usize),
    /// Slot `.0` is free for these maps: encode them, write them, then
    /// [`MapSlots::fill`].
    Vacant(usize),
}

/// One slot's state.
#[derive(Clone, Copy, Debug)]
struct Slot<K> {
    /// The maps it holds (in its device slot or its pinned source).
    key: Option<K>,
    /// A capture used it: never given to other maps.
    pinned: bool,
    /// Its device slot holds the maps in stream order (false for a slot a
    /// capture filled, until a run outside capture copies them in).
    on_device: bool,
    /// When it was last looked up (`MapSlots::clock`), for eviction.
    last_used: u64,
}

/// The slot table: one entry per device slot, keys `K`.
#[derive(Debug)]
pub(crate) struct MapSlots<K> {
    slots: Vec<Slot<K>>,
    /// How many slots captures may pin (fewer than `slots.len()`).
    pinnable: usize,
    clock: u64,
}

impl<K: Copy + PartialEq> MapSlots<K> {
    /// `slots` empty slots, at most `slots - 1` of which captures may pin.
    pub(crate) fn new(slots: usize) -> MapSlots<K> {
        let empty = Slot { key: None, pinned: false, on_device: false, last_used: 0 };
        MapSlots { slots: vec![empty; slots], pinnable: slots.saturating_sub(1), clock: 0 }
    }

    /// The slot for `key`, for a run inside capture (`capturing`) or
    /// outside. A slot found or vacated inside capture is pinned; a vacated
    /// slot is the first empty one, else the least recently used unpinned
    /// one. Inside capture, when `pinnable` slots are pinned and `key` is
    /// not among them: [`AttnError::WorkspaceInCapture`].
    pub(crate) fn find(&mut self, key: K, capturing: bool) -> Result<MapSlot, AttnError> {
        self.clock += 1;
        let pinned = self.slots.iter().filter(|s| s.pinned).count();
        if let Some(index) = self.slots.iter().position(|s| s.key == Some(key)) {
            let slot = &mut self.slots[index];
            if capturing && !slot.pinned {
                if pinned >= self.pinnable {
                    return Err(AttnError::WorkspaceInCapture);
                }
                slot.pinned = true;
            }
            slot.last_used = self.clock;
            return Ok(if slot.on_device { MapSlot::Ready(index) } else { MapSlot::Staged(index) });
        }
        if capturing && pinned >= self.pinnable {
            return Err(AttnError::WorkspaceInCapture);
        }
        let free = self.slots.iter().position(|s| s.key.is_none() && !s.pinned);
        let index = free
            .or_else(|| {
                (0..self.slots.len()).filter(|&i| !self.slots[i].pinned).min_by_key(|&i| self.slots[i].last_used)
            })
            .ok_or(AttnError::WorkspaceInCapture)?;
        // Empty until written, so a failed write leaves no stale key.
        self.slots[index] = Slot { key: None, pinned: false, on_device: false, last_used: self.clock };
        Ok(MapSlot::Vacant(index))
    }

    /// Records that vacant slot `index` now holds `key`'s maps: on the
    /// device (written outside capture), or in its pinned source for the
    /// graphs of a capture (`capturing`), which pins it.
    pub(crate) fn fill(&mut self, index: usize, key: K, capturing: bool) {
        let slot = &mut self.slots[index];
        *slot = Slot { key: Some(key), pinned: capturing, on_device: !capturing, last_used: slot.last_used };
    }

    /// Records that staged slot `index` was copied to the device outside
    /// capture.
    pub(crate) fn written(&mut self, index: usize) {
        self.slots[index].on_device = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Looks `key` up and, on a vacancy, fills the slot as a run would.
    fn run(table: &mut MapSlots<u32>, key: u32, capturing: bool) -> Result<MapSlot, AttnError> {
        let found = table.find(key, capturing)?;
        match found {
            MapSlot::Vacant(i) => table.fill(i, key, capturing),
            MapSlot::Staged(i) if !capturing => table.written(i),
            _ => {}
        }
        Ok(found)
    }

    #[test]
    fn the_same_maps_reuse_their_slot_in_and_out_of_capture() {
        let mut table = MapSlots::new(4);
        assert_eq!(run(&mut table, 7, false).unwrap(), MapSlot::Vacant(0));
        assert_eq!(run(&mut table, 7, false).unwrap(), MapSlot::Ready(0));
        assert_eq!(run(&mut table, 8, false).unwrap(), MapSlot::Vacant(1));
        // A capture after an eager run of the same buffers copies nothing.
        assert_eq!(run(&mut table, 7, true).unwrap(), MapSlot::Ready(0));
        assert_eq!(run(&mut table, 7, false).unwrap(), MapSlot::Ready(0));
    }

    #[test]
    fn maps_a_capture_wrote_are_copied_in_until_an_eager_run_writes_them() {
        let mut table = MapSlots::new(4);
        assert_eq!(run(&mut table, 5, true).unwrap(), MapSlot::Vacant(0));
        // Another capture records the copy from the pinned source again.
        assert_eq!(run(&mut table, 5, true).unwrap(), MapSlot::Staged(0));
        // An eager run copies it in once; then it is on the device.
        assert_eq!(run(&mut table, 5, false).unwrap(), MapSlot::Staged(0));
        assert_eq!(run(&mut table, 5, false).unwrap(), MapSlot::Ready(0));
        assert_eq!(run(&mut table, 5, true).unwrap(), MapSlot::Ready(0));
    }

    #[test]
    fn eviction_takes_the_least_recently_used_unpinned_slot() {
        let mut table = MapSlots::new(3);
        for key in [1, 2, 3] {
            run(&mut table, key, false).unwrap();
        }
        // 1 is used again and 2 is pinned by a capture: 3 is evicted.
        run(&mut table, 1, false).unwrap();
        run(&mut table, 2, true).unwrap();
        assert_eq!(run(&mut table, 4, false).unwrap(), MapSlot::Vacant(2));
        // Now 1 is the least recently used unpinned slot; 2 stays.
        assert_eq!(run(&mut table, 5, false).unwrap(), MapSlot::Vacant(0));
        assert_eq!(run(&mut table, 2, false).unwrap(), MapSlot::Ready(1));
        assert_eq!(run(&mut table, 1, false).unwrap(), MapSlot::Vacant(2));
    }

    #[test]
    fn captures_pin_all_but_one_slot_then_are_refused() {
        let mut table = MapSlots::new(3);
        assert_eq!(run(&mut table, 1, false).unwrap(), MapSlot::Vacant(0));
        run(&mut table, 10, true).unwrap();
        run(&mut table, 11, true).unwrap();
        // Two of three pinned: a third set of buffers in capture is refused,
        // whether new or held in the one unpinned slot.
        assert!(matches!(table.find(12, true), Err(AttnError::WorkspaceInCapture)));
        assert!(matches!(table.find(1, true), Err(AttnError::WorkspaceInCapture)));
        // The pinned sets still run in capture, and eager runs keep a slot.
        assert_eq!(run(&mut table, 10, true).unwrap(), MapSlot::Staged(1));
        assert_eq!(run(&mut table, 1, false).unwrap(), MapSlot::Ready(0));
        assert_eq!(run(&mut table, 12, false).unwrap(), MapSlot::Vacant(0));
        assert_eq!(run(&mut table, 13, false).unwrap(), MapSlot::Vacant(0));
    }
}
