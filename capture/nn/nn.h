// All of coil's nn building blocks (one include for model code).
//
//   #include "capture/nn/nn.h"
//   nn::Linear fc(64, 10);  nn::LayerNorm ln({64});  nn::MultiheadAttention attn(64, 4);
#ifndef COIL_CAPTURE_NN_NN_H_
#define COIL_CAPTURE_NN_NN_H_

#include "capture/nn/activation.h"
#include "capture/nn/attention.h"
#include "capture/nn/conv.h"
#include "capture/nn/dropout.h"
#include "capture/nn/embedding.h"
#include "capture/nn/linear.h"
#include "capture/nn/loss.h"
#include "capture/nn/module.h"
#include "capture/nn/norm.h"

#endif  // COIL_CAPTURE_NN_NN_H_
