import sys,re
which=sys.argv[1]
def sub(p,old,new):
    s=open(p).read(); assert old in s,(p,old); open(p,'w').write(s.replace(old,new))
if which=='nok':
    sub('kernels-gpu/src/attention/warp_tile.rs','[cvt::e4m3x2_to_f16x2(codes as u16), cvt::e4m3x2_to_f16x2((codes >> 16) as u16)]','{ let _ = cvt::e4m3x2_to_f16x2; [codes, codes >> 16] }')
elif which=='nov':
    sub('kernels-gpu/src/attention/split.rs','let [even_lo, odd_lo] = cvt::e4m3x4_to_f16x2_by_column(x[2 * h]);','let [even_lo, odd_lo] = [x[2 * h], x[2 * h] >> 8];')
    sub('kernels-gpu/src/attention/split.rs','let [even_hi, odd_hi] = cvt::e4m3x4_to_f16x2_by_column(x[2 * h + 1]);','let [even_hi, odd_hi] = [x[2 * h + 1], x[2 * h + 1] >> 8];')
elif which=='noexp':
    sub('kernels-gpu/src/attention/online.rs','*x = math::exp2(softmax::exponent::<FUSED>(*x, score_scale_log2, base[e / 2], math::fma));','*x = softmax::exponent::<FUSED>(*x, score_scale_log2, base[e / 2], math::fma);')
elif which=='nopv':
    sub('kernels-gpu/src/attention/split.rs','        unsafe { pv_e4m3(&mut o, &s, v_tile, tile_rows) };','        let _ = (pv_e4m3::<S_TILES, O_TILES>, v_tile); o[0][0] += s[S_TILES - 1][3];')
elif which=='noqk':
    sub('kernels-gpu/src/attention/split.rs','            () => [unsafe { warp_scores::<QK_STEPS, S_TILES>(&q_frag, k_tile, tile_rows) }],','            () => { let _ = (warp_scores::<QK_STEPS, S_TILES>, k_tile); [core::array::from_fn(|t| [(lane + t as u32) as f32 * 0.01; 4])] }')
