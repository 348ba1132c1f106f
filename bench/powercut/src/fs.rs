//! The filesystem: one flat directory whose files live in memory, written
//! through to a backing directory only by fsync.
//!
//! What a power cut keeps is what was fsynced: a file's bytes reach the
//! backing directory (the "disk") only when it is fsynced (or fdatasynced),
//! so killing this process, at any moment, is a power cut: everything
//! written since a file's last fsync is gone, as after the page cache of a
//! machine that lost power. Names are kept at once (a created, renamed or
//! removed file is so on the disk straight away, as if every directory
//! operation were synced): kinder than a real disk, so a loss this test
//! finds is a loss of file contents, the thing `synchronous` is about.
//!
//! One directory, regular files only: what SQLite makes beside a database.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

/// Attributes are never cached by the kernel: sizes change under it.
const TTL: Duration = Duration::ZERO;

struct File {
    name: OsString,
    /// What reads see: the last write.
    data: Vec<u8>,
    /// Byte ranges written since the last fsync.
    dirty: Vec<(usize, usize)>,
    mode: u16,
}

struct State {
    files: HashMap<u64, File>,
    next: u64,
}

pub struct PowerCut {
    disk: PathBuf,
    state: Mutex<State>,
}

impl PowerCut {
    /// Mounts what the backing directory `disk` holds (what the last
    /// fsyncs kept).
    pub fn new(disk: PathBuf) -> std::io::Result<PowerCut> {
        let mut files = HashMap::new();
        let mut next = 2;
        for entry in std::fs::read_dir(&disk)? {
            let entry = entry?;
            if !entry.file_type()?.is_file() {
                continue;
            }
            use std::os::unix::fs::PermissionsExt;
            let mode = (entry.metadata()?.permissions().mode() & 0o7777) as u16;
            files.insert(
                next,
                File {
                    name: entry.file_name(),
                    data: std::fs::read(entry.path())?,
                    dirty: Vec::new(),
                    mode,
                },
            );
            next += 1;
        }
        Ok(PowerCut {
            disk,
            state: Mutex::new(State { files, next }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn on_disk(&self, name: &OsStr) -> PathBuf {
        self.disk.join(name)
    }
}

fn attr(ino: u64, file: Option<&File>) -> FileAttr {
    let (kind, size, perm, nlink) = match file {
        Some(f) => (FileType::RegularFile, f.data.len() as u64, f.mode, 1),
        None => (FileType::Directory, 0, 0o755, 2),
    };
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: UNIX_EPOCH,
        mtime: SystemTime::now(),
        ctime: SystemTime::now(),
        crtime: UNIX_EPOCH,
        kind,
        perm,
        nlink,
        // SAFETY: plain getters.
        uid: unsafe { libc::geteuid() },
        gid: unsafe { libc::getegid() },
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

fn find(state: &State, name: &OsStr) -> Option<u64> {
    state
        .files
        .iter()
        .find(|(_, f)| f.name == name)
        .map(|(&ino, _)| ino)
}

impl Filesystem for PowerCut {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let state = self.state();
        match (parent == INodeNo::ROOT)
            .then(|| find(&state, name))
            .flatten()
        {
            Some(ino) => reply.entry(&TTL, &attr(ino, state.files.get(&ino)), Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let state = self.state();
        if ino == INodeNo::ROOT {
            return reply.attr(&TTL, &attr(1, None));
        }
        match state.files.get(&ino.0) {
            Some(f) => reply.attr(&TTL, &attr(ino.0, Some(f))),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut state = self.state();
        let Some(f) = state.files.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(mode) = mode {
            f.mode = (mode & 0o7777) as u16;
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(
                self.disk.join(&f.name),
                std::fs::Permissions::from_mode(u32::from(f.mode)),
            );
        }
        if let Some(size) = size {
            // A truncation is data too: kept at the next fsync.
            f.data.resize(size as usize, 0);
            f.dirty.push((size as usize, size as usize));
        }
        reply.attr(&TTL, &attr(ino.0, Some(f)));
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if self.state().files.contains_key(&ino.0) {
            reply.opened(FileHandle(0), FopenFlags::empty());
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        let mut state = self.state();
        let ino = match find(&state, name) {
            Some(ino) => ino,
            None => {
                let mode = (mode & !umask & 0o7777) as u16;
                let created = std::fs::File::create(self.on_disk(name)).and_then(|f| {
                    use std::os::unix::fs::PermissionsExt;
                    f.set_permissions(std::fs::Permissions::from_mode(u32::from(mode)))
                });
                if let Err(e) = created {
                    return reply.error(Errno::from(e));
                }
                let ino = state.next;
                state.next += 1;
                state.files.insert(
                    ino,
                    File {
                        name: name.to_os_string(),
                        data: Vec::new(),
                        dirty: Vec::new(),
                        mode,
                    },
                );
                ino
            }
        };
        let a = attr(ino, state.files.get(&ino));
        reply.created(&TTL, &a, Generation(0), FileHandle(0), FopenFlags::empty());
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let state = self.state();
        let Some(f) = state.files.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let start = (offset as usize).min(f.data.len());
        let end = (start + size as usize).min(f.data.len());
        reply.data(&f.data[start..end]);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut state = self.state();
        let Some(f) = state.files.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let (start, end) = (offset as usize, offset as usize + data.len());
        if f.data.len() < end {
            f.data.resize(end, 0);
        }
        f.data[start..end].copy_from_slice(data);
        f.dirty.push((start, end));
        reply.written(data.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close() is no sync.
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut state = self.state();
        let Some(f) = state.files.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let kept = std::fs::OpenOptions::new()
            .write(true)
            .open(self.disk.join(&f.name))
            .and_then(|disk| {
                for &(start, end) in &f.dirty {
                    let end = end.min(f.data.len());
                    if start < end {
                        disk.write_all_at(&f.data[start..end], start as u64)?;
                    }
                }
                disk.set_len(f.data.len() as u64)
            });
        match kept {
            Ok(()) => {
                f.dirty.clear();
                reply.ok()
            }
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // Names are kept at once (see the module doc).
        reply.ok();
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut state = self.state();
        match (parent == INodeNo::ROOT)
            .then(|| find(&state, name))
            .flatten()
        {
            Some(ino) => {
                state.files.remove(&ino);
                let _ = std::fs::remove_file(self.on_disk(name));
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        _parent: INodeNo,
        name: &OsStr,
        _newparent: INodeNo,
        newname: &OsStr,
        _flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut state = self.state();
        let Some(ino) = find(&state, name) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(old) = find(&state, newname) {
            state.files.remove(&old);
        }
        if let Err(e) = std::fs::rename(self.on_disk(name), self.on_disk(newname)) {
            return reply.error(Errno::from(e));
        }
        if let Some(f) = state.files.get_mut(&ino) {
            f.name = newname.to_os_string();
        }
        reply.ok();
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let state = self.state();
        let mut entries: Vec<(u64, FileType, OsString)> = vec![
            (1, FileType::Directory, ".".into()),
            (1, FileType::Directory, "..".into()),
        ];
        entries.extend(
            state
                .files
                .iter()
                .map(|(&i, f)| (i, FileType::RegularFile, f.name.clone())),
        );
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(ino), (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }
}
