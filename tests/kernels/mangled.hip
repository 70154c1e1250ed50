// C++ kernels (mangled names) over the constructs rocpy.codeobject.demangle reads:
// tests/codeobject/test_demangle.py compares its output with llvm-cxxfilt's.
#include <hip/hip_runtime.h>
namespace ns { struct P { int a; float b; }; namespace in { enum class E : int { x }; } }
namespace { struct Anon { double d; }; }
template <class T> struct Box { T v; };
__global__ void scale(float* x, int n, float a) {}
__global__ void kconst(const float* __restrict__ a, const int* b, volatile unsigned* c) {}
__global__ void kall(bool b, char c, signed char sc, unsigned char uc, short s, unsigned short us,
                     int i, unsigned u, long l, unsigned long ul, long long ll, unsigned long long ull,
                     float f, double d, _Float16 h, __fp16* hp) {}
__global__ void kstruct(ns::P p, ns::P* pp, ns::in::E e, Anon an, Box<float> bf, Box<ns::P>* bp) {}
template <class T> __global__ void tk(T* x, T v, int n) {}
template __global__ void tk<float>(float*, float, int);
template __global__ void tk<double>(double*, double, int);
template <class T, int N> __global__ void tn(T* x, Box<T> b) {}
template __global__ void tn<int, 4>(int*, Box<int>);
template __global__ void tn<unsigned, -2>(unsigned*, Box<unsigned>);
template <typename... A> __global__ void var(A... a) {}
template __global__ void var<int, float, double*>(int, float, double*);
template <bool B, unsigned long N> __global__ void lit(int* x) {}
template __global__ void lit<true, 5ul>(int*);
__global__ void kvec(float4 v, float2* p, int3 q) {}
__global__ void kref(const ns::P& r) {}
__global__ void knone() {}
__global__ void ksame(ns::P* a, ns::P* b, const ns::P* c, const ns::P* d) {}
__global__ void kstd(std::size_t n, std::nullptr_t z, float* const p) {}
template <class T> __global__ void tnest(Box<Box<T>> b, T* p) {}
template __global__ void tnest<float>(Box<Box<float>>, float*);
__global__ void kfp(void (*f)(int), int a[4]) {}
__global__ void kscale(float* x, int n, float a) { int i = threadIdx.x; if (i < n) x[i] *= a; }
