// The list of fields every stage is instantiated for: the four arithmetics and
// the jets over the inexact ones (sensitivity), and the MPFR jets with double
// derivatives (the float judge's cheap estimate). Stage files instantiate their
// templates with MHAQ_FOR_EACH_FIELD and never name a number type themselves.
#pragma once
#include "mhaq/arith/field.hpp"
#include "mhaq/arith/jet.hpp"

#define MHAQ_FOR_EACH_FIELD(X)            \
  X(::mhaq::Field<::mhaq::QTau>)          \
  X(::mhaq::Field<::mhaq::Ball>)          \
  X(::mhaq::Field<::mhaq::Mpfr>)          \
  X(::mhaq::Field<double>)                \
  X(::mhaq::Field<::mhaq::Jet<::mhaq::Ball>>) \
  X(::mhaq::Field<::mhaq::Jet<::mhaq::Mpfr>>) \
  X(::mhaq::Field<::mhaq::Jet<double>>)  \
  X(::mhaq::Field<::mhaq::JetMpfrD>)

// The transformer's stages (6-regions, 7-neurons, the transformer learner)
// run on the four arithmetics and on the jets of the transformer's error
// estimate (over MPFR and double); no caller runs them on the other jets.
#define MHAQ_FOR_EACH_TRANSFORMER_FIELD(X) \
  X(::mhaq::Field<::mhaq::QTau>)           \
  X(::mhaq::Field<::mhaq::Ball>)           \
  X(::mhaq::Field<::mhaq::Mpfr>)           \
  X(::mhaq::Field<double>)                 \
  X(::mhaq::Field<::mhaq::Jet<::mhaq::Mpfr>>) \
  X(::mhaq::Field<::mhaq::Jet<double>>)
