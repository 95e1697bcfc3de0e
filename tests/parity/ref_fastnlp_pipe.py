"""Reference for fastnlp_bert's data (test-only): fastNLP 0.6.0's own
CMRC2018BertPipe over the C++ workload's simulated CMRC2018.

The C++ test (fastnlp_bert_parity_test.cc) writes the splits it drew
(models::SimulateFastNlp: each question's context and question as GB2312
codes) to --splits. This script writes them as CMRC2018's train.json and
dev.json (one paragraph per question, which the loader reads as the same
sequence of instances), runs the pipe as TorchBench's fastNLP_Bert does, and
saves the words' vocabulary in index order (GB2312 codes from index 2, -1 for
[SEP]) and every instance's word indexes per split, for the C++ test to
compare with its own.
"""
import argparse
import json
import os
import tempfile

import torch
from fastNLP.io.pipe.qa import CMRC2018BertPipe

SEP_CODE = -1  # models::kFastNlpSepWord


def text(codes):
    return "".join(bytes([c >> 8, c & 0xFF]).decode("gb2312") for c in codes)


def code(word):
    if word == "[SEP]":
        return SEP_CODE
    raw = word.encode("gb2312")
    return raw[0] << 8 | raw[1]


def write_split(path, questions, prefix):
    data = []
    for i, q in enumerate(questions):
        context = text(q["context"])
        para = {"id": f"{prefix}_{i}", "context": context, "qas": [
            {"question": text(q["question"]), "id": f"{prefix}_{i}_QUERY_0",
             "answers": [{"text": context[:8], "answer_start": 0}]}]}
        data.append({"id": para["id"], "title": context[:5], "paragraphs": [para]})
    with open(path, "w", encoding="utf8") as f:
        json.dump({"version": "v1.0-sim", "data": data}, f, ensure_ascii=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--splits", required=True, help="JSON {train: [...], dev: [...]} from the C++ test")
    args = parser.parse_args()
    if args.model != "fastnlp_bert":
        raise SystemExit(f"unknown model id {args.model}")
    with open(args.splits, encoding="utf8") as f:
        splits = json.load(f)
    root = tempfile.mkdtemp(prefix="fastnlp_pipe_")
    for name in ("train", "dev"):
        write_split(os.path.join(root, f"{name}.json"), splits[name], name.upper())
    bundle = CMRC2018BertPipe().process_from_file(paths=root)
    vocab = bundle.get_vocab("chars")
    assert vocab.to_index(vocab.padding) == 0 and vocab.to_index(vocab.unknown) == 1
    saved = {"vocabulary": torch.tensor([code(vocab.to_word(i)) for i in range(2, len(vocab))])}
    for name in ("train", "dev"):
        saved[f"{name}_words"] = torch.tensor([list(ins["chars"]) for ins in bundle.get_dataset(name)])
    torch.save(saved, args.out)


if __name__ == "__main__":
    main()
