# Reads a compute-sanitizer memcheck log and prints "ERRORS NCCL_PROBES": the errors its ERROR SUMMARY
# counts (-1 where the log has no summary: the run did not finish) and how many of them are NCCL's own
# kernel probes. NCCL asks for the attributes of each of its kernels at initialization
# (cudaFuncGetAttributes) and takes "no kernel image is available" for a kernel not built for this chip
# as an answer; memcheck reports each such answer as an API error (4 per communicator with NCCL 2.28 on
# an H200). A probe is an error block whose first line names cudaErrorNoKernelImageForDevice on
# cudaFuncGetAttributes and whose first host frame past libcuda is in libnccl. scripts/gpu-check.sh
# fails a case with any error besides those; tests/tools/memcheck_logs holds logs it is checked on.
#   awk -f scripts/memcheck-errors.awk LOG
/ERROR SUMMARY: [0-9]+ error/ { for (i = 1; i <= NF; i++) if ($i == "SUMMARY:") total = $(i + 1) }
/^========= [^ =]/ && !/COMPUTE-SANITIZER|ERROR SUMMARY|LEAK SUMMARY/ {  # an error block begins
  if (probe) probes++
  probe = 0; in_block = 1; frame = ""
  candidate = ($0 ~ /cudaErrorNoKernelImageForDevice/ && $0 ~ /cudaFuncGetAttributes/)
  next
}
in_block && /Host Frame:/ && frame == "" && !/libcuda\.so/ { frame = $0; probe = candidate && frame ~ /libnccl\.so/ }
/^========= *$/ { in_block = 0; if (probe) probes++; probe = 0 }  # a block ends
END { if (probe) probes++; print (total == "" ? -1 : total) + 0, probes + 0 }
