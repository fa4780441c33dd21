//! A kube-apiserver stand-in.
