// Kaldi's util/stl-utils.h over std::vector: the sorting, de-duplicating and pointer-vector
// helpers Kaldi's programs call (vector-sum deletes its readers with DeletePointers).
#pragma once

#include <tablio/core/config.hpp>

#include <algorithm>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// Sorts *v and removes repeated values.
template <class T>
void SortAndUniq(std::vector<T>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}
// Whether v is sorted (repeats allowed).
template <class T>
bool IsSorted(const std::vector<T>& v) {
  return std::is_sorted(v.begin(), v.end());
}
// Whether v is sorted with no value repeated.
template <class T>
bool IsSortedAndUniq(const std::vector<T>& v) {
  return std::adjacent_find(v.begin(), v.end(), [](const T& a, const T& b) { return !(a < b); }) == v.end();
}
// Removes repeats that follow each other in *v, as std::unique does.
template <class T>
void Uniq(std::vector<T>* v) {
  v->erase(std::unique(v->begin(), v->end()), v->end());
}
// Deletes what each pointer of *v points to and sets the pointer to nullptr.
template <class A>
void DeletePointers(std::vector<A*>* v) {
  for (A*& p : *v) {
    delete p;
    p = nullptr;
  }
}
// Whether a pointer of v is nullptr.
template <class A>
bool ContainsNullPointers(const std::vector<A*>& v) {
  return std::find(v.begin(), v.end(), nullptr) != v.end();
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
