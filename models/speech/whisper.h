// Whisper (Radford et al. 2022, "Robust Speech Recognition via Large-Scale
// Weak Supervision"), written as torch::nn modules whose parameter names follow
// transformers' modeling_whisper (WhisperEncoder, WhisperDecoder,
// WhisperModel, WhisperForConditionalGeneration, WhisperForAudioClassification),
// so the reference's state dict loads by name for the parity test. The speech
// recognition workloads TorchBench and PyTorch's compiler suite added since
// the paper:
//  - hf_whisper: TorchBench hf_Whisper, WhisperConfig() (transformers'
//    defaults: whisper-tiny's widths) under AutoModelForAudioClassification,
//    i.e. WhisperForAudioClassification: the encoder, a projector
//    (d_model -> classifier_proj_size 256) averaged over time, a classifier
//    to num_labels 2.
//  - hf_distil_whisper: TorchBench hf_distil_whisper, the config of
//    distil-whisper/distil-medium.en under the same head (only its 24-layer
//    encoder is built; the 2-layer decoder is not part of that class).
//  - whisper_tiny: the compiler suite's openai/whisper-tiny with
//    WhisperForConditionalGeneration (encoder, decoder, proj_out tied to the
//    decoder's token embedding). Its workload is generative
//    (models/generator.h): greedy decoding over a key-value cache, the
//    encoder run once per generation on the workload's audio.
//
// The computation, as transformers 4.57.1 writes it with eager attention:
// two Conv1d (kernel 3, the second with stride 2) with exact GELU over the
// log-mel input [batch, num_mel_bins, 2 * max_source_positions], plus the
// sinusoidal position table (embed_positions: an nn.Embedding that
// transformers fills with sinusoids(max_source_positions, d_model) and freezes;
// a parameter that is not trained, kept so the weights load); pre-norm
// layers (self-attention with the query scaled by head_dim^-0.5 before the
// product and no key bias; fc1, GELU, fc2), a final LayerNorm. The decoder
// adds learned positions and masks the future with an additive float mask of
// the dtype's minimum, as transformers' eager mask does. LayerDrop is 0, but
// in training the reference draws one torch.rand([]) per layer; so do we.
// Dropouts are 0 in every configuration here.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// transformers' WhisperConfig fields that shape the network.
struct WhisperConfig {
  int64_t vocab_size = 51865;
  int64_t num_mel_bins = 80;
  int64_t d_model = 384;
  int64_t encoder_layers = 4;
  int64_t decoder_layers = 4;
  int64_t encoder_attention_heads = 6;
  int64_t decoder_attention_heads = 6;
  int64_t encoder_ffn_dim = 1536;
  int64_t decoder_ffn_dim = 1536;
  int64_t max_source_positions = 1500;  // the encoder's positions after the stride-2 conv
  int64_t max_target_positions = 448;
  double dropout = 0.0;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;
  double encoder_layerdrop = 0.0;
  double decoder_layerdrop = 0.0;
  double init_std = 0.02;
  int64_t pad_token_id = 50256;
  int64_t bos_token_id = 50256;
  int64_t eos_token_id = 50256;
  int64_t decoder_start_token_id = 50257;
  // WhisperForAudioClassification.
  int64_t classifier_proj_size = 256;
  int64_t num_labels = 2;  // PretrainedConfig's default (no id2label given)
};

// transformers' WhisperConfig() defaults (hf_whisper).
WhisperConfig WhisperDefaultConfig();
// distil-whisper/distil-medium.en's config.json (hf_distil_whisper).
WhisperConfig DistilWhisperMediumEnConfig();
// openai/whisper-tiny's config.json (whisper_tiny).
WhisperConfig WhisperTinyConfig();
// The reduced configuration smoke runs and the parity tests build: 2 + 2
// layers, d_model 64, 4 heads, ffn 256, 80 mel bins, 100 source positions
// (200 input frames), 64 target positions, vocab 1024, projector 64.
WhisperConfig WhisperSmokeConfig();
// hf_distil_whisper's reduced configuration: WhisperSmokeConfig() at
// distil-medium.en's proportions, d_model 128, 8 heads, ffn 512.
WhisperConfig DistilWhisperSmokeConfig();

enum class WhisperHead { kAudioClassification, kConditionalGeneration };

// The initialised network (WhisperForAudioClassification or
// WhisperForConditionalGeneration) on the CPU, drawing from the seeded
// generator.
std::shared_ptr<torch::nn::Module> MakeWhisper(const WhisperConfig& config, WhisperHead head);

// Registers hf_whisper, hf_distil_whisper and whisper_tiny.
void AddWhisperModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
