//! Offloaded RDMA traffic through a verbs sniffer flow: a raw-packet QP with an
//! `IBV_FLOW_ATTR_SNIFFER` steering rule receives a copy of every packet of the port, including
//! the RoCE traffic the NIC handles without the kernel (ibv_create_flow(3)).
//!
//! libibverbs is loaded at run time (`libibverbs.so.1`), so the binary runs where rdma-core is
//! absent. The few structures touched are laid out here from rdma-core's `<infiniband/verbs.h>`
//! (a stable ABI); the data-path calls that the header implements inline (`ibv_poll_cq`,
//! `ibv_post_recv`, `ibv_create_flow`, `ibv_destroy_flow`) go through the same function tables
//! the header uses. Not exercised on hardware here: see the README's capture section.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::null_mut;

use super::LiveError;

const LIB: &str = "libibverbs.so.1";
const IBV_QPT_RAW_PACKET: u32 = 8;
const IBV_QPS_INIT: u32 = 1;
const IBV_QPS_RTR: u32 = 2;
const IBV_QP_STATE: c_int = 1;
const IBV_QP_PORT: c_int = 1 << 5;
const IBV_ACCESS_LOCAL_WRITE: c_int = 1;
const IBV_FLOW_ATTR_SNIFFER: u32 = 3;

/// `struct ibv_context`: `ops` starts after the device pointer; 8-byte function pointers.
const CTX_OPS: usize = 8;
const OPS_POLL_CQ: usize = 11;
const OPS_POST_RECV: usize = 26;
const CTX_ABI_COMPAT: usize = 320;
const CTX_SIZE: usize = 328;
/// `struct verbs_context` ends with `..., ibv_destroy_flow, ABI_placeholder2, ibv_create_flow,
/// ABI_placeholder1, open_qp, create_qp_ex, get_srq_num, create_srq_ex, open_xrcd, close_xrcd,
/// _ABI_placeholder3, sz, context`: offsets back from `context`.
const VCTX_SZ: isize = -8;
const VCTX_CREATE_FLOW: isize = -80;
const VCTX_DESTROY_FLOW: isize = -96;
/// `struct ibv_qp_attr` is 144 bytes; `port_num` is at 129.
const QP_ATTR_SIZE: usize = 144;
const QP_ATTR_PORT: usize = 129;

/// Receive buffers: count and size of each (a 9000-byte jumbo frame plus slack).
const SLOTS: usize = 2048;
const SLOT: usize = 10240;
const POLL_BATCH: usize = 64;

#[repr(C)]
struct QpCap {
    max_send_wr: u32,
    max_recv_wr: u32,
    max_send_sge: u32,
    max_recv_sge: u32,
    max_inline_data: u32,
}

#[repr(C)]
struct QpInitAttr {
    qp_context: *mut c_void,
    send_cq: *mut c_void,
    recv_cq: *mut c_void,
    srq: *mut c_void,
    cap: QpCap,
    qp_type: u32,
    sq_sig_all: c_int,
}

#[repr(C)]
struct FlowAttr {
    comp_mask: u32,
    kind: u32,
    size: u16,
    priority: u16,
    num_of_specs: u8,
    port: u8,
    flags: u32,
}

#[repr(C)]
struct Sge {
    addr: u64,
    length: u32,
    lkey: u32,
}

#[repr(C)]
struct RecvWr {
    wr_id: u64,
    next: *mut RecvWr,
    sg_list: *mut Sge,
    num_sge: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Wc {
    wr_id: u64,
    status: u32,
    opcode: u32,
    vendor_err: u32,
    byte_len: u32,
    imm_data: u32,
    qp_num: u32,
    src_qp: u32,
    wc_flags: u32,
    pkey_index: u16,
    slid: u16,
    sl: u8,
    dlid_path_bits: u8,
}

#[repr(C)]
struct Mr {
    context: *mut c_void,
    pd: *mut c_void,
    addr: *mut c_void,
    length: usize,
    handle: u32,
    lkey: u32,
    rkey: u32,
}

type PollCq = unsafe extern "C" fn(*mut c_void, c_int, *mut Wc) -> c_int;
type PostRecv = unsafe extern "C" fn(*mut c_void, *mut RecvWr, *mut *mut RecvWr) -> c_int;
type CreateFlow = unsafe extern "C" fn(*mut c_void, *mut FlowAttr) -> *mut c_void;
type DestroyFlow = unsafe extern "C" fn(*mut c_void) -> c_int;

struct Api {
    _lib: libloading::Library,
    get_device_list: unsafe extern "C" fn(*mut c_int) -> *mut *mut c_void,
    free_device_list: unsafe extern "C" fn(*mut *mut c_void),
    get_device_name: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    open_device: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    close_device: unsafe extern "C" fn(*mut c_void) -> c_int,
    alloc_pd: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    dealloc_pd: unsafe extern "C" fn(*mut c_void) -> c_int,
    create_cq:
        unsafe extern "C" fn(*mut c_void, c_int, *mut c_void, *mut c_void, c_int) -> *mut c_void,
    destroy_cq: unsafe extern "C" fn(*mut c_void) -> c_int,
    create_qp: unsafe extern "C" fn(*mut c_void, *mut QpInitAttr) -> *mut c_void,
    destroy_qp: unsafe extern "C" fn(*mut c_void) -> c_int,
    modify_qp: unsafe extern "C" fn(*mut c_void, *mut u8, c_int) -> c_int,
    reg_mr: unsafe extern "C" fn(*mut c_void, *mut c_void, usize, c_int) -> *mut Mr,
    dereg_mr: unsafe extern "C" fn(*mut Mr) -> c_int,
}

fn load() -> Result<Api, LiveError> {
    // SAFETY: loading libibverbs runs its initialisers (provider discovery), nothing else; the
    // symbol types below are the prototypes of <infiniband/verbs.h>.
    unsafe {
        let lib = libloading::Library::new(LIB).map_err(|_| {
            LiveError::Rdma(format!(
                "capturing from an RDMA device needs {LIB} (rdma-core) at run time, and it is \
                 not installed: `apt-get install libibverbs1 ibverbs-providers` (or your \
                 distribution's rdma-core)"
            ))
        })?;
        macro_rules! sym {
            ($name:literal) => {
                *lib.get(concat!($name, "\0").as_bytes())
                    .map_err(|e| LiveError::Rdma(format!("{LIB} has no {}: {e}", $name)))?
            };
        }
        Ok(Api {
            get_device_list: sym!("ibv_get_device_list"),
            free_device_list: sym!("ibv_free_device_list"),
            get_device_name: sym!("ibv_get_device_name"),
            open_device: sym!("ibv_open_device"),
            close_device: sym!("ibv_close_device"),
            alloc_pd: sym!("ibv_alloc_pd"),
            dealloc_pd: sym!("ibv_dealloc_pd"),
            create_cq: sym!("ibv_create_cq"),
            destroy_cq: sym!("ibv_destroy_cq"),
            create_qp: sym!("ibv_create_qp"),
            destroy_qp: sym!("ibv_destroy_qp"),
            modify_qp: sym!("ibv_modify_qp"),
            reg_mr: sym!("ibv_reg_mr"),
            dereg_mr: sym!("ibv_dereg_mr"),
            _lib: lib,
        })
    }
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn step_error(what: &'static str, dev: &str) -> LiveError {
    let e = errno();
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => LiveError::Permission {
            what,
            iface: dev.to_string(),
            needs_admin: true,
        },
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) | Some(libc::EINVAL)
            if what == "creating the sniffer flow" =>
        {
            LiveError::Rdma(format!(
                "{dev} does not support sniffer flows ({e}); on ConnectX this needs a recent \
                 kernel and firmware, or use the vendor's offload-sniffer tooling"
            ))
        }
        _ => LiveError::Os {
            what,
            iface: dev.to_string(),
            source: e,
        },
    }
}

/// One received packet.
pub struct SnifferPacket<'a> {
    pub data: &'a [u8],
}

/// An open sniffer: every packet of one port of one RDMA device.
pub struct Sniffer {
    api: Api,
    ctx: *mut c_void,
    pd: *mut c_void,
    cq: *mut c_void,
    qp: *mut c_void,
    mr: *mut Mr,
    flow: *mut c_void,
    buf: Vec<u8>,
    name: String,
    /// Completions with an error status (each one a lost packet).
    pub errors: u64,
}

// SAFETY: the verbs objects are owned by this value and used from one thread at a time.
unsafe impl Send for Sniffer {}

impl Sniffer {
    /// Opens `device` port `port` and attaches the sniffer flow.
    pub fn open(device: &str, port: u8) -> Result<Self, LiveError> {
        let api = load()?;
        let name = format!("{device}:{port}");
        let mut s = Self {
            api,
            ctx: null_mut(),
            pd: null_mut(),
            cq: null_mut(),
            qp: null_mut(),
            mr: null_mut(),
            flow: null_mut(),
            buf: vec![0u8; SLOTS * SLOT],
            name: name.clone(),
            errors: 0,
        };
        // SAFETY: each call follows ibv_*(3): arguments are live objects created just before,
        // every result is checked, and `Drop` releases whatever was created in reverse order.
        unsafe {
            let mut n: c_int = 0;
            let list = (s.api.get_device_list)(&mut n);
            if list.is_null() {
                return Err(step_error("listing RDMA devices", &name));
            }
            let mut found = null_mut();
            let mut names = Vec::new();
            for i in 0..n.max(0) as usize {
                let dev = *list.add(i);
                let dn = CStr::from_ptr((s.api.get_device_name)(dev)).to_string_lossy();
                if dn == device {
                    found = dev;
                }
                names.push(dn.into_owned());
            }
            if !found.is_null() {
                s.ctx = (s.api.open_device)(found);
            }
            (s.api.free_device_list)(list);
            if found.is_null() {
                return Err(LiveError::Rdma(format!(
                    "libibverbs knows no device {device} (it has: {}); is its provider library \
                     (ibverbs-providers) installed?",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )));
            }
            if s.ctx.is_null() {
                return Err(step_error("opening the device", &name));
            }
            s.pd = (s.api.alloc_pd)(s.ctx);
            if s.pd.is_null() {
                return Err(step_error("allocating a protection domain", &name));
            }
            s.cq = (s.api.create_cq)(s.ctx, SLOTS as c_int, null_mut(), null_mut(), 0);
            if s.cq.is_null() {
                return Err(step_error("creating a completion queue", &name));
            }
            let mut init = QpInitAttr {
                qp_context: null_mut(),
                send_cq: s.cq,
                recv_cq: s.cq,
                srq: null_mut(),
                cap: QpCap {
                    max_send_wr: 1,
                    max_recv_wr: SLOTS as u32,
                    max_send_sge: 1,
                    max_recv_sge: 1,
                    max_inline_data: 0,
                },
                qp_type: IBV_QPT_RAW_PACKET,
                sq_sig_all: 0,
            };
            s.qp = (s.api.create_qp)(s.pd, &mut init);
            if s.qp.is_null() {
                return Err(step_error("creating a raw-packet queue pair", &name));
            }
            let mut attr = [0u8; QP_ATTR_SIZE];
            attr[..4].copy_from_slice(&IBV_QPS_INIT.to_ne_bytes());
            attr[QP_ATTR_PORT] = port;
            if (s.api.modify_qp)(s.qp, attr.as_mut_ptr(), IBV_QP_STATE | IBV_QP_PORT) != 0 {
                return Err(step_error("moving the queue pair to INIT", &name));
            }
            let mut attr = [0u8; QP_ATTR_SIZE];
            attr[..4].copy_from_slice(&IBV_QPS_RTR.to_ne_bytes());
            if (s.api.modify_qp)(s.qp, attr.as_mut_ptr(), IBV_QP_STATE) != 0 {
                return Err(step_error("moving the queue pair to RTR", &name));
            }
            s.mr = (s.api.reg_mr)(
                s.pd,
                s.buf.as_mut_ptr().cast(),
                s.buf.len(),
                IBV_ACCESS_LOCAL_WRITE,
            );
            if s.mr.is_null() {
                return Err(step_error("registering receive buffers", &name));
            }
            for slot in 0..SLOTS {
                s.post(slot)?;
            }
            let create: Option<CreateFlow> = s.vctx_op(VCTX_CREATE_FLOW);
            let Some(create) = create else {
                return Err(LiveError::Rdma(format!(
                    "{name}: this libibverbs provider has no flow steering (ibv_create_flow)"
                )));
            };
            let mut fa = FlowAttr {
                comp_mask: 0,
                kind: IBV_FLOW_ATTR_SNIFFER,
                size: std::mem::size_of::<FlowAttr>() as u16,
                priority: 0,
                num_of_specs: 0,
                port,
                flags: 0,
            };
            s.flow = create(s.qp, &mut fa);
            if s.flow.is_null() {
                return Err(step_error("creating the sniffer flow", &name));
            }
        }
        Ok(s)
    }

    /// A `struct verbs_context` operation, when the context is extended and large enough.
    unsafe fn vctx_op<F: Copy>(&self, off: isize) -> Option<F> {
        // SAFETY: `ctx` is a live ibv_context; `abi_compat == UINTPTR_MAX` marks it as embedded
        // in a verbs_context whose `sz` says how many bytes precede-and-include it.
        unsafe {
            let base = self.ctx.cast::<u8>();
            let compat = *(base.add(CTX_ABI_COMPAT) as *const usize);
            if compat != usize::MAX {
                return None;
            }
            let sz = *(base.offset(VCTX_SZ) as *const usize);
            if sz < CTX_SIZE + (-off) as usize {
                return None;
            }
            let f = *(base.offset(off) as *const *const c_void);
            (!f.is_null()).then(|| std::mem::transmute_copy(&f))
        }
    }

    unsafe fn ctx_op<F: Copy>(&self, index: usize) -> F {
        // SAFETY: `ops` is an array of function pointers inside the live context.
        unsafe {
            let f = *(self.ctx.cast::<u8>().add(CTX_OPS + index * 8) as *const *const c_void);
            std::mem::transmute_copy(&f)
        }
    }

    fn post(&mut self, slot: usize) -> Result<(), LiveError> {
        // SAFETY: the slot lies inside the registered buffer; the WR and SGE live for the call.
        unsafe {
            let mut sge = Sge {
                addr: self.buf.as_mut_ptr().add(slot * SLOT) as u64,
                length: SLOT as u32,
                lkey: (*self.mr).lkey,
            };
            let mut wr = RecvWr {
                wr_id: slot as u64,
                next: null_mut(),
                sg_list: &mut sge,
                num_sge: 1,
            };
            let mut bad = null_mut();
            let post: PostRecv = self.ctx_op(OPS_POST_RECV);
            if post(self.qp, &mut wr, &mut bad) != 0 {
                return Err(step_error("posting receive buffers", &self.name));
            }
        }
        Ok(())
    }

    /// Polls the completion queue once; calls `each` per received packet. Returns how many.
    pub fn poll(&mut self, mut each: impl FnMut(SnifferPacket<'_>)) -> Result<usize, LiveError> {
        let mut wc = [Wc {
            wr_id: 0,
            status: 0,
            opcode: 0,
            vendor_err: 0,
            byte_len: 0,
            imm_data: 0,
            qp_num: 0,
            src_qp: 0,
            wc_flags: 0,
            pkey_index: 0,
            slid: 0,
            sl: 0,
            dlid_path_bits: 0,
        }; POLL_BATCH];
        // SAFETY: `wc` has room for POLL_BATCH completions.
        let n = unsafe {
            let poll: PollCq = self.ctx_op(OPS_POLL_CQ);
            poll(self.cq, POLL_BATCH as c_int, wc.as_mut_ptr())
        };
        if n < 0 {
            return Err(step_error("polling the completion queue", &self.name));
        }
        for c in &wc[..n as usize] {
            let slot = c.wr_id as usize % SLOTS;
            if c.status == 0 {
                let len = (c.byte_len as usize).min(SLOT);
                each(SnifferPacket {
                    data: &self.buf[slot * SLOT..slot * SLOT + len],
                });
            } else {
                self.errors += 1;
            }
            self.post(slot)?;
        }
        Ok(n as usize)
    }
}

impl Drop for Sniffer {
    fn drop(&mut self) {
        // SAFETY: releases the objects `open` created, newest first; each pointer is either
        // null (never created) or live.
        unsafe {
            if !self.flow.is_null() {
                if let Some(destroy) = self.vctx_op::<DestroyFlow>(VCTX_DESTROY_FLOW) {
                    destroy(self.flow);
                }
            }
            if !self.qp.is_null() {
                (self.api.destroy_qp)(self.qp);
            }
            if !self.mr.is_null() {
                (self.api.dereg_mr)(self.mr);
            }
            if !self.cq.is_null() {
                (self.api.destroy_cq)(self.cq);
            }
            if !self.pd.is_null() {
                (self.api.dealloc_pd)(self.pd);
            }
            if !self.ctx.is_null() {
                (self.api.close_device)(self.ctx);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The structures passed to libibverbs have the sizes of their C definitions (x86-64).
    #[test]
    fn struct_layouts_match_verbs_h() {
        assert_eq!(std::mem::size_of::<QpCap>(), 20);
        assert_eq!(std::mem::size_of::<QpInitAttr>(), 64);
        assert_eq!(std::mem::size_of::<FlowAttr>(), 20);
        assert_eq!(std::mem::size_of::<Sge>(), 16);
        assert_eq!(std::mem::size_of::<RecvWr>(), 32);
        assert_eq!(std::mem::size_of::<Wc>(), 48);
        assert_eq!(std::mem::offset_of!(Mr, lkey), 36);
    }

    #[test]
    fn without_libibverbs_the_error_says_what_to_install() {
        if unsafe { libloading::Library::new(LIB) }.is_ok() {
            eprintln!("notice: {LIB} is installed here; skipping the missing-library test");
            return;
        }
        let e = Sniffer::open("mlx5_0", 1)
            .err()
            .expect("no libibverbs here");
        let msg = e.to_string();
        assert!(
            msg.contains(LIB) && msg.contains("apt-get install"),
            "{msg}"
        );
    }
}
