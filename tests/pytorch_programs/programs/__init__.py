"""The PyTorch programs, each as its authors would write it for torch."""
