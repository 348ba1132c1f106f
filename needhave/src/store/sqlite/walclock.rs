//! A clock for the memo that moves with every commit to the file, by this
//! process or any other, read without a system call: the WAL index header.
//!
//! Every connection to a WAL database maps its `-shm` file, whose first
//! 48 bytes (written twice, 48 bytes apart) are the WAL index header
//! (<https://sqlite.org/walformat.html>, "The WAL-Index Header"). A commit
//! appends frames and publishes the new last frame there (`mxFrame`) before
//! it returns; a checkpoint that restarts the WAL changes `salt-1`. So
//! (`salt-1`, `mxFrame`) changes with every commit, and only then (a
//! checkpoint that does not restart the WAL leaves both alone, and changes
//! no content). SQLite's own readers use the header the same way: the
//! writer writes the second copy, then the first, and a reader that finds
//! the copies different knows it raced a writer; here that reading is
//! "cannot tell", and the list asks the database.
//!
//! `PRAGMA data_version` would say the same, but it runs in a read
//! transaction, and in WAL a read transaction locks and unlocks a byte of
//! `-shm` with `fcntl`: two system calls on every `GET /posts`, which was
//! most of what that call cost the store.
//!
//! The header is read through SQLite's own map of `-shm`, the one the
//! writer connection uses (its VFS's `xShmMap`), not a map of our own: this
//! process must never open and close a descriptor of `-shm` beside SQLite's,
//! since closing any descriptor of a file drops every POSIX lock the process
//! holds on it, and with them the lock that tells other processes this one
//! is using the WAL (one would then reset `-shm` and delete the WAL under the
//! server). SQLite keeps the map while the connection is open.

use std::sync::atomic::{fence, Ordering};

/// The header's size; the map covers both copies.
const HEADER: usize = 48;
const MX_FRAME: usize = 16 / 4;
const SALT1: usize = 32 / 4;
const IS_INIT: usize = 12;
/// SQLite's region size of the WAL index.
const REGION: i32 = 32 * 1024;

pub struct WalClock {
    base: *const u8,
}

// The map is only read, through volatile reads; a torn read is detected.
unsafe impl Send for WalClock {}
unsafe impl Sync for WalClock {}

impl WalClock {
    /// The header of `conn`'s WAL index, if it has one (a WAL database).
    ///
    /// # Safety
    /// `conn` must stay open, in WAL mode, for as long as the clock is read.
    pub unsafe fn of(conn: &rusqlite::Connection) -> Option<WalClock> {
        use rusqlite::ffi;
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: the connection's own handle, asked for its main file.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                conn.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&mut file as *mut *mut ffi::sqlite3_file).cast(),
            )
        };
        if rc != ffi::SQLITE_OK || file.is_null() {
            return None;
        }
        // SAFETY: a live file of the connection; its methods are the VFS's.
        let methods = unsafe { (*file).pMethods.as_ref()? };
        if methods.iVersion < 2 {
            return None;
        }
        let map = methods.xShmMap?;
        let mut region: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: region 0, never extending it: the one the WAL already uses.
        let rc = unsafe { map(file, 0, REGION, 0, &mut region) };
        if rc != ffi::SQLITE_OK || region.is_null() {
            return None;
        }
        Some(WalClock {
            base: region as *const u8,
        })
    }

    fn copy(&self, n: usize) -> [u32; HEADER / 4] {
        let mut out = [0u32; HEADER / 4];
        for (i, word) in out.iter_mut().enumerate() {
            // SAFETY: within the map (2 * HEADER bytes), u32-aligned (the
            // map is page-aligned).
            *word = unsafe {
                std::ptr::read_volatile((self.base as *const u32).add(n * HEADER / 4 + i))
            };
        }
        out
    }

    /// (`salt-1`, `mxFrame`), or `None` while a writer is mid-header or the
    /// index is not initialised.
    pub fn read(&self) -> Option<u64> {
        let first = self.copy(0);
        fence(Ordering::Acquire);
        let second = self.copy(1);
        let init = first[IS_INIT / 4].to_ne_bytes()[IS_INIT % 4];
        if first != second || init == 0 {
            return None;
        }
        Some((u64::from(first[SALT1]) << 32) | u64::from(first[MX_FRAME]))
    }
}
