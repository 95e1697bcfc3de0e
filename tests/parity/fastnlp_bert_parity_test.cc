// Parity of fastnlp_bert (models/nlp/fastnlp_bert.h) against fastNLP 0.6.0's
// own BertForQuestionAnswering over BertEmbedding (ref_fastnlp_bert.py), built
// as TorchBench's fastNLP_Bert builds it on a simulated CMRC2018, at a reduced
// encoder (2 layers, hidden 64, 4 heads, intermediate 128; the 21,128-row
// vocabulary kept) with every dropout off: the eval logits, the train step's
// CMRC2018Loss and every gradient (the pooler's, which the loss never
// reaches, absent on both sides). The reference's words, word-piece table and
// special pieces replace the C++ simulation's, so both map the same words to
// the same pieces. The registered configuration's parameter count is checked
// against fastNLP's BertModel built on the meta device, the simulated
// batch's shape against TorchBench's CMRC2018 lengths, and the simulation's
// own words and vocabulary against fastNLP's CMRC2018BertPipe run on the
// same characters (ref_fastnlp_pipe.py).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "models/nlp/fastnlp_bert.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kScript = "ref_fastnlp_bert.py";

models::FastNlpBertConfig SmallConfig() {
  models::FastNlpBertConfig c;
  c.num_hidden_layers = 2;
  c.hidden_size = 64;
  c.num_attention_heads = 4;
  c.intermediate_size = 128;
  c.hidden_dropout_prob = 0;
  c.attention_probs_dropout_prob = 0;
  c.embed_dropout = 0;
  c.word_dropout = 0;
  return c;
}

models::FastNlpVocab ReferenceVocab(const c10::impl::GenericDict& saved) {
  models::FastNlpVocab v;
  const auto table = saved.at("word_to_piece").toTensor();
  v.word_to_piece.assign(table.data_ptr<int64_t>(), table.data_ptr<int64_t>() + table.numel());
  const auto specials = saved.at("special_pieces").toTensor();
  v.piece_cls = specials[0].item<int64_t>();
  v.piece_sep = specials[1].item<int64_t>();
  v.piece_pad = specials[2].item<int64_t>();
  v.word_sep = saved.at("word_sep_index").toTensor().item<int64_t>();
  return v;
}

}  // namespace

TEST_CASE("parity fastnlp_bert") {
  const auto saved = parity::RunReferenceScript(kScript, "fastnlp_bert");
  const auto ref = parity::ReferenceFromDict(saved);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto w = models::FastNlpBertInfo(SmallConfig()).create(opt);
  auto* qa = w->net().as<models::FastNlpBertForQaImpl>();
  REQUIRE(qa != nullptr);
  qa->bert->model->UseVocab(ReferenceVocab(saved));
  // The attention keys' bias adds a constant to each row of scores, which
  // softmax removes, and qa_outputs' bias one to every start (end) logit,
  // which the cross entropy removes: their gradients are zero in exact
  // arithmetic, rounding noise on both sides, held to that; every other
  // gradient is compared.
  const auto e = parity::MeasureParity(*w, ref, 1234, std::nullopt, {"attention.self.key.bias", "qa_outputs.bias"});
  parity::CheckParityErrors("fastnlp_bert", ref, e, 1e-4);
  CHECK(e.output <= 1e-5);
  CHECK(e.loss <= 1e-5);
  CHECK(e.noise_grads == 3);
  // Every parameter but the pooler's two has a gradient on both sides.
  CHECK(e.grads + e.noise_grads + 2 == w->net().parameters().size());

  const int64_t count =
      parity::ParameterCount(*models::FastNlpBertForQa(models::FastNlpBertConfig{}, models::FastNlpVocab{}));
  const int64_t meta = parity::MetaParameterCount(kScript, "fastnlp_bert");
  std::cout << "parity fastnlp_bert: parameters of TorchBench's bert_config.json with the QA head " << count
            << ", reference (meta) " << meta << std::endl;
  CHECK(count == meta);
  CHECK(count == 102269186);
}

TEST_CASE("fastnlp_bert simulated CMRC2018 batch") {
  // TorchBench's lengths: context 457 (train) or 456 (dev) characters,
  // [SEP], a 16-character question; the answer at 0 to 7. The encoder is
  // reduced: only the inputs are checked.
  for (const auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    const bool train = mode == models::Mode::kTrain;
    models::WorkloadOptions opt;
    opt.mode = mode;
    opt.batch_size = train ? 6 : 1;
    models::SeedAll(0);
    auto w = models::FastNlpBertInfo(SmallConfig()).create(opt);
    const auto& in = w->inputs();
    const int64_t context = train ? 457 : 456;
    CHECK(in.at("words").sizes() == torch::IntArrayRef({opt.batch_size, context + 1 + 16}));
    CHECK(torch::equal(in.at("context_len"), torch::full({opt.batch_size}, context, torch::kLong)));
    CHECK(in.at("target_end").eq(7).all().item<bool>());
    auto* qa = w->net().as<models::FastNlpBertForQaImpl>();
    REQUIRE(qa != nullptr);
    const auto& vocab = qa->bert->model->vocab;
    // The [SEP] word between context and question, and nowhere else.
    CHECK(in.at("words").select(1, context).eq(vocab.word_sep).all().item<bool>());
    CHECK(in.at("words").eq(vocab.word_sep).sum().item<int64_t>() == opt.batch_size);
    // Train: 6 paragraphs of 457 characters and 30 questions of 16, so a few
    // thousand distinct words; the dev words are in the vocabulary too (the
    // pipe's no_create_entry_dataset), so no word is <unk>.
    CHECK(vocab.word_to_piece.size() > 1000);
    CHECK_FALSE(in.at("words").eq(vocab.word_unk).any().item<bool>());
    torch::NoGradGuard no_grad;
    w->net().eval();
    CHECK(w->Forward().sizes() == torch::IntArrayRef({opt.batch_size, context + 1 + 16, 2}));
  }
}

// The C++ simulation's splits through fastNLP's own CMRC2018BertPipe
// (ref_fastnlp_pipe.py): the same word vocabulary, index for index, and the
// same word indexes for the batch the workload feeds, in train (the train
// split) and eval (the dev split), at TorchBench's lengths and batches. The
// C++ once built the vocabulary from the train split alone, so that in eval
// 300 of 473 words reached the model as <unk>.
TEST_CASE("fastnlp_bert words and vocabulary as CMRC2018BertPipe builds them") {
  for (const auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    const bool train = mode == models::Mode::kTrain;
    INFO("mode ", (train ? "train" : "eval"));
    models::SeedAll(0);
    const auto sim = models::SimulateFastNlp(mode, train ? 6 : 1, /*smoke=*/false);
    nlohmann::json splits;
    for (const auto& [name, questions] : {std::pair{"train", &sim.train}, std::pair{"dev", &sim.dev}}) {
      auto& out = splits[name] = nlohmann::json::array();
      for (const auto& q : *questions) out.push_back({{"context", q.context}, {"question", q.question}});
    }
    const auto path = std::filesystem::path(TORCHGAUGE_BINARY_DIR) / "parity" /
                      (std::string("fastnlp_splits_") + (train ? "train" : "eval") + ".json");
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << splits.dump();
    const auto saved = parity::RunReferenceScript("ref_fastnlp_pipe.py", "fastnlp_bert", {"--splits", path.string()});
    const auto vocabulary = saved.at("vocabulary").toTensor();
    CHECK(torch::equal(vocabulary, torch::tensor(sim.vocabulary, torch::kLong)));
    const auto expected = saved.at(train ? "train_words" : "dev_words").toTensor();
    REQUIRE(expected.size(0) >= sim.words.size(0));
    CHECK(torch::equal(sim.words, expected.slice(0, 0, sim.words.size(0))));
    std::cout << "fastnlp_bert " << (train ? "train" : "eval") << ": vocabulary of " << sim.vocabulary.size() + 2
              << " words (the pipe's " << vocabulary.numel() + 2 << "); batch " << sim.words.sizes() << ", <unk> words "
              << sim.words.eq(1).sum().item<int64_t>() << std::endl;
  }
}
