import csv, sys
def load(p):
    rows=list(csv.reader(open(p)))
    hdr=rows[1]; i_src=hdr.index("Source"); i_s=hdr.index("Warp Stall Sampling (All Samples)"); i_e=hdr.index("Instructions Executed")
    out=[]
    for r in rows[2:]:
        if len(r)<=i_e: continue
        try: out.append((r[i_src].strip(), int(r[i_s] or 0), int(r[i_e] or 0)))
        except ValueError: pass
    return out
for p in sys.argv[1:]:
    ins=load(p)
    tot=sum(s for _,s,_ in ins)
    first_hmma=next(i for i,(src,_,_) in enumerate(ins) if src.startswith("HMMA"))
    preexit=next(i for i,(src,_,_) in enumerate(ins) if "PREEXIT" in src)
    pro=sum(s for _,s,_ in ins[:first_hmma]); loop=sum(s for _,s,_ in ins[first_hmma:preexit]); tail=sum(s for _,s,_ in ins[preexit:])
    ex=lambda a,b: sum(e for _,_,e in ins[a:b])
    print(f"{p}: samples {tot}  prologue {pro} ({pro/tot:.1%})  loop {loop} ({loop/tot:.1%})  merge {tail} ({tail/tot:.1%});  executed warp-instr prologue {ex(0,first_hmma)} loop {ex(first_hmma,preexit)} merge {ex(preexit,len(ins))}")
    top=sorted(enumerate(ins), key=lambda x:-x[1][1])[:12]
    for i,(src,s,e) in top:
        reg = "pro" if i<first_hmma else ("loop" if i<preexit else "merge")
        print(f"   {s:6d} {reg:5s} #{i:4d} {src[:70]}")
