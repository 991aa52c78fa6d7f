import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p(); cu.cuGetErrorString(r, ctypes.byref(s)); print(what, r, s.value); sys.exit(1)
ck(cu.cuInit(0), "init")
dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx"); ck(cu.cuCtxSetCurrent(ctx), "cur")
for path in sys.argv[1:]:
    mod = ctypes.c_void_p(); ck(cu.cuModuleLoad(ctypes.byref(mod), path.encode()), "load " + path)
    for name in ["sdpa_wgmma_d64", "sdpa_wgmma_d128", "sdpa_kv_tiles_d64", "sdpa_split_d64"]:
        f = ctypes.c_void_p(); ck(cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), name)
        out = {}
        for attr, an in [(0, "max_threads"), (1, "shared"), (4, "regs"), (3, "local"), (5, "ptx_ver"), (6, "bin_ver"), (8, "max_dyn_smem")]:
            v = ctypes.c_int(); ck(cu.cuFuncGetAttribute(ctypes.byref(v), attr, f), an); out[an] = v.value
        print(path, name, out)
