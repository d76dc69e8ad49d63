// The holder layer: the generic holder and Kaldi's named holders.
#pragma once

#include <tablio/holder/basic.hpp>
#include <tablio/holder/bytes.hpp>
#include <tablio/holder/concepts.hpp>
#include <tablio/holder/holder.hpp>
#include <tablio/holder/token.hpp>
#include <tablio/holder/wave.hpp>
