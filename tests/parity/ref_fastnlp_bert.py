"""Parity reference for fastnlp_bert: fastNLP 0.6.0's own classes, built as TorchBench's fastNLP_Bert builds them.

TorchBench's fastNLP_Bert (torchbenchmark/models/fastNLP_Bert) is fastNLP's "BertEmbedding Q&A" tutorial on a
simulated CMRC2018: random GB2312 characters at the real dataset's lengths, CMRC2018BertPipe (context, [SEP],
question, one character per word), BertEmbedding over that vocabulary with a bert_config.json and a vocab.txt of the
characters drawn, and BertForQuestionAnswering on top. TorchBench patches fastNLP so that the encoder is built from
the config with random weights instead of loaded; this script applies the same change by replacing
BertModel.from_pretrained (the patch's only effect). Everything else is fastNLP's code, unchanged: the word-piece
mapping, the token types from the [SEP]s, its BertModel, the pooling, CMRC2018Loss.

The data follow cmrc2018_simulator.py's structure and lengths (title, context, five questions of 16 characters with
one answer of 8 at position 0 in train; four questions with three answers in dev) with a shorter context (CONTEXT,
where TorchBench draws 457 train and 456 dev characters), so that the reduced encoder below runs quickly. The C++
test builds the same reduced encoder and feeds it these inputs.

TorchBench's train() never steps its optimizer: fastNLP's update_every is 10 and one train() runs 5 batches, so it
runs forward, CMRC2018Loss and backward, with zero_grad at its first batch. The "optimizer" here is therefore SGD at
lr 0 (the parameters after the step equal the initial ones, as the C++ train step leaves them), and the gradients
are saved and compared.

The id fastnlp_bert.meta saves the parameter count of TorchBench's bert_config.json (BERT-base, 21,128-row
vocabulary) with the QA head, built on the meta device.
"""
import json
import os
import random
import tempfile

import torch
from fastNLP import DataSetIter
from fastNLP.core.losses import CMRC2018Loss
from fastNLP.embeddings import BertEmbedding
from fastNLP.io.pipe.qa import CMRC2018BertPipe
from fastNLP.models import BertForQuestionAnswering
from fastNLP.modules.encoder import bert as fastnlp_bert

from parity_common import main

# torchbenchmark/models/fastNLP_Bert/bert_config.json.
FULL = {
    "attention_probs_dropout_prob": 0.1, "directionality": "bidi", "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 512,
    "num_attention_heads": 12, "num_hidden_layers": 12, "pooler_fc_size": 768, "pooler_num_attention_heads": 12,
    "pooler_num_fc_layers": 3, "pooler_size_per_head": 128, "pooler_type": "first_token_transform",
    "type_vocab_size": 2, "vocab_size": 21128,
}
# The C++ test's reduced encoder (fastnlp_bert_parity_test.cc): no dropout, so that a train step compares.
SMALL = dict(FULL, num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
             hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
CONTEXT, BATCH = 40, 2


def gb2312_chars(n, vocab):
    """cmrc2018_simulator._GBK2312(n - 1): n random GB2312 hanzi (rows 0xB0-0xF7 but 0xD7)."""
    out = []
    for _ in range(n):
        head = 0xD7
        while head == 0xD7:
            head = random.randint(0xB0, 0xF7)
        out.append(bytes([head, random.randint(0xA1, 0xFE)]).decode("gb2312"))
    vocab.update(out)
    return "".join(out)


def simulate(items, title, context, qas, answers, vocab, prefix):
    data = []
    for i in range(items):
        para = {"id": f"{prefix}_{i}", "context": gb2312_chars(context, vocab), "qas": []}
        for q in range(qas):
            para["qas"].append({"question": gb2312_chars(16, vocab), "id": f"{prefix}_{i}_QUERY_{q}", "answers": [
                {"text": gb2312_chars(8, vocab), "answer_start": 0} for _ in range(answers)]})
        data.append({"id": para["id"], "title": gb2312_chars(title, vocab), "paragraphs": [para]})
    return {"version": "v1.0-sim", "data": data}


def write_dataset(root, config):
    """train.json, dev.json and config/{vocab.txt, bert_config.json} as generate_inputs writes them."""
    random.seed(0)
    vocab = set()
    train = simulate(BATCH, 6, CONTEXT, 5, 1, vocab, "TRAIN")
    dev = simulate(1, 5, CONTEXT - 1, 4, 3, vocab, "DEV")
    os.makedirs(os.path.join(root, "config"))
    for name, data in (("train.json", train), ("dev.json", dev)):
        with open(os.path.join(root, name), "w", encoding="utf8") as f:
            json.dump(data, f, ensure_ascii=False)
    vocab.update(["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"])
    with open(os.path.join(root, "config", "vocab.txt"), "w", encoding="utf8") as f:
        f.write("\n".join(sorted(vocab)))
    with open(os.path.join(root, "config", "bert_config.json"), "w") as f:
        json.dump(config, f)
    open(os.path.join(root, "config", "chinese_wwm_pytorch.bin"), "w").close()


def use_config(path):
    """TorchBench's fastnlp.patch: the encoder is BertModel(config) from the json, not from_pretrained's weights."""
    fastnlp_bert.BertModel.from_pretrained = classmethod(
        lambda cls, *args, **kwargs: cls(config=fastnlp_bert.BertConfig.from_json_file(path)))


def build(model_id):
    if model_id != "fastnlp_bert":
        raise SystemExit(f"unknown model id {model_id}")
    root = os.path.join(tempfile.mkdtemp(prefix="fastnlp_bert_"), "cmrc2018-sim")
    write_dataset(root, SMALL)
    use_config(os.path.join(root, "config", "bert_config.json"))
    bundle = CMRC2018BertPipe().process_from_file(paths=root)
    bundle.rename_field("chars", "words")
    # TorchBench's arguments but the two dropouts (0.5 and 0.01 there; the C++ registry keeps them).
    embed = BertEmbedding(bundle.get_vocab("words"), model_dir_or_name=os.path.join(root, "config"),
                          requires_grad=True, include_cls_sep=False, auto_truncate=True, dropout=0.0,
                          word_dropout=0.0)
    model = BertForQuestionAnswering(embed)
    batch_x, batch_y = next(iter(DataSetIter(dataset=bundle.get_dataset("train"), batch_size=BATCH, sampler=None)))
    inputs = {"words": batch_x["words"], "target_start": batch_y["target_start"],
              "target_end": batch_y["target_end"], "context_len": batch_y["context_len"]}
    losser = CMRC2018Loss()

    def forward(m, i):
        out = m(i["words"])
        return torch.stack([out["pred_start"], out["pred_end"]], -1)

    def loss(m, i):
        out = m(i["words"])
        return losser.get_loss(i["target_start"], i["target_end"], i["context_len"], out["pred_start"],
                               out["pred_end"])

    def extra(m, i):
        # The word -> word piece table (a numpy array in _BertWordModel, not a buffer) and the piece ids of
        # [CLS], [SEP] and [PAD], which the C++ model takes as its tokenizer's.
        word_model = m.bert.model
        return {"word_to_piece": torch.tensor([int(p[0]) for p in word_model.word_to_wordpieces]),
                "special_pieces": torch.tensor([word_model._cls_index, word_model._sep_index,
                                                word_model._wordpiece_pad_index]),
                "word_sep_index": torch.tensor(m.bert._word_sep_index)}

    return {"module": model, "inputs": inputs, "forward": forward, "loss": loss,
            "optimizer": lambda m: torch.optim.SGD(m.parameters(), lr=0.0), "extra": extra, "save_grads": True}


def meta_modules(model_id):
    """fastNLP's BertModel at bert_config.json and BertForQuestionAnswering's head."""
    if model_id != "fastnlp_bert":
        raise SystemExit(f"unknown model id {model_id}")
    path = os.path.join(tempfile.mkdtemp(prefix="fastnlp_bert_"), "bert_config.json")
    with open(path, "w") as f:
        json.dump(FULL, f)
    return [fastnlp_bert.BertModel(fastnlp_bert.BertConfig.from_json_file(path)), torch.nn.Linear(FULL["hidden_size"], 2)]


if __name__ == "__main__":
    main(build, meta=meta_modules)
