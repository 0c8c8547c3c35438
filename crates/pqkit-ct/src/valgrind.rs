//! Valgrind client requests, written from valgrind's documented x86_64 protocol (valgrind.h: the "special
//! instruction preamble" of four `rol rdi` summing to 128 bits, then `xchg rbx, rbx`; `rax` points at the
//! request block `[request, arg1..arg5]`, the result comes back in `rdx`, which holds the default value
//! returned when not running under valgrind). Outside valgrind the sequence is a no-op: the rotations return
//! `rdi` to its value and the exchange does nothing.

/// `VG_USERREQ_TOOL_BASE('M', 'C')`: memcheck's request numbers start here.
const MC_BASE: u64 = ((b'M' as u64) << 24) | ((b'C' as u64) << 16);
/// `VG_USERREQ__MAKE_MEM_UNDEFINED`.
const MAKE_MEM_UNDEFINED: u64 = MC_BASE + 1;
/// `VG_USERREQ__MAKE_MEM_DEFINED`.
const MAKE_MEM_DEFINED: u64 = MC_BASE + 2;
/// `VG_USERREQ__RUNNING_ON_VALGRIND` (core request 0x1001).
const RUNNING_ON_VALGRIND: u64 = 0x1001;

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn request(default: u64, args: [u64; 6]) -> u64 {
    let block = args;
    let result: u64;
    // SAFETY: the sequence only rotates rdi by a total of 128 bits (leaving it unchanged) and exchanges rbx
    // with itself; it reads the six-word request block through rax (a valid pointer to `block`, which
    // outlives the asm) and writes rdx. Under valgrind the core recognises the preamble and performs the
    // request, which only changes memcheck's shadow state of the described range (no memory is written).
    // The rotations change the flags, which the asm does not claim to preserve.
    // The asm is not `nomem`, so the compiler orders it with the surrounding memory accesses.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") block.as_ptr(),
            inout("rdx") default => result,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn request(default: u64, _args: [u64; 6]) -> u64 {
    default
}

/// Whether the process runs under valgrind.
pub fn running_on_valgrind() -> bool {
    request(0, [RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0]) != 0
}

/// Marks `bytes` secret: memcheck now reports any branch or address computed from them.
pub fn secret<T: ?Sized>(v: &T) {
    let len = core::mem::size_of_val(v) as u64;
    request(0, [MAKE_MEM_UNDEFINED, v as *const T as *const u8 as u64, len, 0, 0, 0]);
}

/// Marks `bytes` public again (a value that may leak: a ciphertext, a tag, a signature).
pub fn public<T: ?Sized>(v: &T) {
    let len = core::mem::size_of_val(v) as u64;
    request(0, [MAKE_MEM_DEFINED, v as *const T as *const u8 as u64, len, 0, 0, 0]);
}
