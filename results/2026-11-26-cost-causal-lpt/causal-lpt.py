#!/usr/bin/env python3
# Stage 114 (session 18, CPU only): does a list-scheduling (LPT) makespan of
# the causal blocks predict causal times better than cost.rs's "blocks count
# half"? Replicates the model (checked against `sdpa plan`), scores the picks
# of both forms with the committed coefficients, then refits every variant
# with each form in sample. usage (repo root):
#   python3 results/2026-11-26-cost-causal-lpt/causal-lpt.py $(ls results/2026-11-2*-h100-run1{16,17,20,21,24,26,27,33,60}*/*.json)
import os, sys, heapq, subprocess
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import importlib.util
spec = importlib.util.spec_from_file_location("cp", os.path.join(REPO, "scripts", "check-picks.py")); cp = importlib.util.module_from_spec(spec); spec.loader.exec_module(cp)
COST = {("mma",64):(2.154,15.41,0.698,4),("mma",128):(3.429,25.68,0.574,3),("wgmma",64):(3.978,10.70,3.042,2),("wgmma",128):(6.256,15.63,3.663,1),
("split",64):(1.622,6.192,3.310,2),("split",128):(1.449,11.03,1.804,2),("split-wg",64):(1.415,9.174,1.716,2),("split-wg",128):(1.266,12.33,2.089,1),
("split-n64",64):(1.418,4.424,4.956,1),("split-n64",128):(1.350,8.752,2.218,2)}
BM = {("mma",64):64,("mma",128):64,("wgmma",64):128,("wgmma",128):192,("split",64):32,("split",128):32,("split-wg",64):64,("split-wg",128):64,("split-n64",64):32,("split-n64",128):32}
ORDER = ["mma","wgmma","split","split-wg","split-n64"]
SMS=132
def rnd(n): return 1.0 + 0.44*(n-1)
def load(blocks, per_sm):
    ob = -(-blocks//SMS); full, rest = divmod(ob, per_sm)
    return full*rnd(per_sm) + (rnd(rest) if rest else 0.0)
def key_end(row0, rows, sq, skv):
    last = min(sq-1, row0+rows-1); end = last + skv - sq + 1
    return 0 if end <= 0 else min(end, skv)
def lpt(durs, slots):
    h=[0.0]*slots; heapq.heapify(h)
    for d in sorted(durs, reverse=True):
        t=heapq.heappop(h); heapq.heappush(h, t+d)
    return max(h)
def pred(shape, v, mode):
    b,h,s,d,causal = shape
    f,pk,pe,per = COST[(v,d)]; bm = BM[(v,d)]
    qb = -(-s//bm); blocks = b*h*qb
    if not causal:
        keys = s*load(blocks, per)
    elif mode == "old":
        keys = s*load(-(-blocks//2), per)
    else:
        durs = []
        for i in range(qb):
            durs += [key_end(i*bm, bm, s, s)] * (b*h)
        keys = lpt([x*rnd(per) for x in durs], SMS*per)
    return f + pk*keys/1e3 + pe*b*h*s*d/1e6
def pick(shape, mode):
    if shape[2] < 128: return None
    best="split"
    for v in ORDER:
        if pred(shape,v,mode) < pred(shape,best,mode): best=v
    return best
files = sys.argv[1:]
latest = {}
for p in files:
    for sh, v in cp.timings(p).items(): latest[sh]=v
def parse(sh):
    x=sh.split(","); return (int(x[0]),int(x[1]),int(x[2]),int(x[3]),len(x)==5)
plan = cp.picks(os.path.join(REPO, "target", "release", "sdpa"), list(latest))
agree = sum(1 for sh in latest if pick(parse(sh),"old") in (plan[sh], None))
print("python old model agrees with sdpa plan:", agree, "/", len(latest))
for mode in ["old","lpt"]:
    miss=[]; 
    for sh,v in latest.items():
        pk = pick(parse(sh),mode) or plan[sh]
        if pk not in cp.winners(v): miss.append((sh, pk, min(v,key=v.get), v.get(pk, float('nan'))/min(v.values())))
    print(mode, len(latest)-len(miss), "/", len(latest))
    for m in miss: print("   ", m[0], m[1], "fastest", m[2], f"{m[3]:.3f}")

# --- refit every variant with the LPT causal feature (or the old one), in sample
import json
spec2 = importlib.util.spec_from_file_location("fc", os.path.join(REPO, "scripts", "fit-cost.py")); fc = importlib.util.module_from_spec(spec2); spec2.loader.exec_module(fc)
def feats(shape, v, mode):
    b,h,s,d,causal = shape
    f,pk,pe,per = COST[(v,d)]; bm = BM[(v,d)]
    qb = -(-s//bm); blocks=b*h*qb
    if not causal: keys = s*load(blocks, per)
    elif mode=="old": keys = s*load(-(-blocks//2), per)
    else:
        durs=[]
        for i in range(qb): durs += [key_end(i*bm,bm,s,s)]*(b*h)
        keys = lpt([x*rnd(per) for x in durs], SMS*per)
    return [1.0, keys/1e3, b*h*s*d/1e6]
rows = {}
for p in files:
    for r in json.load(open(p))["rows"]:
        sh=r["shape"]
        if r["mode"]!="graph" or not r["correct"] or r["variant"] not in ORDER or not (128<=sh["seq"]<=2048): continue
        key=(sh["batch"],sh["heads"],sh["seq"],sh["head_dim"],sh["causal"])
        rows[(r["variant"],key)] = r["median_us"]
for mode in ["old","lpt"]:
    fitted={}
    for (v,d) in COST:
        data=[(k,t) for (vv,k),t in rows.items() if vv==v and k[3]==d]
        a=[[x/t for x in feats(k,v,mode)] for k,t in data]
        fitted[(v,d)] = fc.solve(a,[1.0]*len(a))
    def pr(k,v): return sum(c*x for c,x in zip(fitted[(v,k[3])], feats(k,v,mode)))
    miss=0; ms=[]
    for sh,v in latest.items():
        k=parse(sh)
        if k[2]<128: continue
        best=min(ORDER,key=lambda x: pr(k,x))
        if best not in cp.winners(v): miss+=1; ms.append((sh,best,f"{v.get(best,float('nan'))/min(v.values()):.3f}"))
    err=[abs(pr(k,v)/t-1) for (v,k),t in rows.items()]
    cerr=[abs(pr(k,v)/t-1) for (v,k),t in rows.items() if k[4]]
    print(f"refit {mode}: misses {miss}; mean |rel err| {sum(err)/len(err):.3f}, causal {sum(cerr)/len(cerr):.3f} ({len(cerr)} rows)", ms)
