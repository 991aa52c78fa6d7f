mkdir -p gpu-bundle/bin && cp gpu-bundle-diag/r103/sdpa-s71 gpu-bundle/bin/sdpa && bash scripts/ncu-source.sh 2,8,256,64 m256 split && bash scripts/ncu-source.sh 1,8,512,64 m512 split
