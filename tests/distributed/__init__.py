"""Tests of torch.distributed's names over MPI, and DistributedDataParallel."""
