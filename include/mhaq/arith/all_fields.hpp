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
