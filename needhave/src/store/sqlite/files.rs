//! The database file as the operator sees it: created `0600` (it holds
//! thread keys), and known by its identity so that a file deleted or
//! replaced under the running server is noticed.
//!
//! SQLite creates `-wal` and `-shm` with the mode of the database file
//! itself, so creating the database `0600` before SQLite opens it is what
//! makes all three private; nothing is written to any of them before that.
//! A file that already exists keeps the mode its operator gave it.

use std::fs::OpenOptions;
use std::io;

/// Creates `path` empty and `0600` unless it exists.
pub fn create_private(path: &str) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes a database this process created and what SQLite made beside it,
/// after a failed start: nothing the operator had is touched (the caller
/// knows the file was not there before).
pub fn remove_created(path: &str) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}

/// `Err` naming the cause unless this process may write `path` and make
/// its side files (`-wal`, `-shm`, the salt) beside it. SQLite opens a file
/// it may only read as read-only without a word, and the server would then
/// start, say it is healthy, and answer 500 to every write; so the start
/// asks first. `access(2)` asks the kernel with this process's own ids, so
/// modes, ACLs and a read-only mount all count, and root passes as root
/// can write.
pub fn writable(path: &str) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::ffi::CString;
        let check = |what: &std::path::Path, mode: libc::c_int, name: &str| {
            let c = CString::new(what.as_os_str().as_encoded_bytes())
                .map_err(|_| io::Error::other("a path with a NUL byte"))?;
            // SAFETY: a plain system call on a NUL-terminated path we own.
            if unsafe { libc::access(c.as_ptr(), mode) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            Err(io::Error::new(e.kind(), format!("{name}: {e}")))
        };
        check(
            std::path::Path::new(path),
            libc::R_OK | libc::W_OK,
            "the file is not writable for this user",
        )?;
        check(
            directory(path),
            libc::W_OK | libc::X_OK,
            "its directory is not writable for this user (SQLite makes -wal and -shm there)",
        )?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The directory `path` names a file in (`.` for a bare name).
#[cfg(unix)]
fn directory(path: &str) -> &std::path::Path {
    std::path::Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
}

/// Makes a new name in `path`'s directory durable (fsync of the directory).
pub fn sync_parent(path: &str) -> io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(directory(path))?.sync_all()?;
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Which file a path names: device and inode where there are such things.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity(u64, u64);

impl Identity {
    /// The file `path` names now, or `None` if it names none.
    pub fn of(path: &str) -> Option<Identity> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Identity(meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        {
            // No inode: at least notice the file going away.
            let _ = meta;
            Some(Identity(0, 0))
        }
    }
}

/// Holds an advisory lock on `path` for as long as the returned file is
/// open, so that a second `needhave serve` on the same database refuses to
/// start. It is `flock`, which SQLite's own `fcntl` locks do not see: other
/// processes (`sqlite3`, Litestream, `needhave backup`) open the file as
/// usual.
pub fn hold(path: &str) -> io::Result<std::fs::File> {
    let file = std::fs::File::open(path)?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            return Err(if e.kind() == io::ErrorKind::WouldBlock {
                io::Error::other("another process serves it: one needhave serve per database")
            } else {
                e
            });
        }
    }
    Ok(file)
}
