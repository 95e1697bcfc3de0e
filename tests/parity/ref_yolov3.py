"""Plain-torch re-statement of TorchBench's yolov3 (test-only).

torchbenchmark/models/yolov3 is ultralytics' YOLOv3 (archive branch, 2020):
yolo_models.py builds a Darknet network from cfg/yolov3-spp.cfg, and
yolo_train.py / yolo_utils/utils.py train it with compute_loss and
build_targets. It has no PyPI package, so this script restates, written for
the test:
  - a Darknet cfg parser and network builder (conv + BatchNorm2d(momentum
    0.03, eps 1e-4) + LeakyReLU(0.1), shortcut, route, maxpool, upsample,
    yolo), parameters named module_list.<i>.Conv2d.weight etc., with the
    "smart bias" init of the conv before each yolo layer;
  - the YOLO layers' inference output (sigmoid xy + grid, exp wh * anchors,
    times the stride, sigmoid of objectness and classes);
  - compute_loss / build_targets (anchor match by wh IoU > iou_t, GIoU box
    loss, BCEWithLogits objectness and class losses with TorchBench's gains);
  - TorchBench's first (and, as TorchBench runs it, every) train iteration:
    burn-in at ni = 0 (giou ratio gr 0, SGD nesterov momentum 0.9, lr 0 for
    weights, 0.1 for biases, no weight decay), loss * batch / 64;
  - non_max_suppression (conf 0.3, IoU 0.6, best class, merge), with
    torchvision.ops.nms, for the --model yolov3_nms check.

The network is built from the cfg text the C++ test writes (--cfg), the
same text models/vision/detection/yolov3.cc builds its network from.

Writes the parity_common file layout (params, inputs, output, loss, updated).
--double runs everything in float64.
"""
import argparse
import math

import torch
from torch import nn
import torch.nn.functional as F
import torchvision

TRAIN_SEED = 1234  # parity_common.TRAIN_SEED

# yolo_train.py hyp (the entries the loss and the first step use).
HYP = {"giou": 3.54, "cls": 37.4, "cls_pw": 1.0, "obj": 64.3, "obj_pw": 1.0, "iou_t": 0.20}


def parse_cfg(text):
    blocks = []
    for raw in text.split("\n"):
        line = raw.split("#")[0].strip()
        if not line:
            continue
        if line.startswith("["):
            blocks.append({"type": line[1:-1].strip()})
        else:
            key, val = line.split("=")
            blocks[-1][key.strip()] = val.strip()
    return blocks


def ints(s):
    return [int(v) for v in s.split(",") if v.strip()]


class Yolo(nn.Module):
    def __init__(self, anchors, nc, stride):
        super().__init__()
        self.na, self.nc, self.no, self.stride = len(anchors), nc, nc + 5, stride
        vec = torch.tensor(anchors, dtype=torch.float32) / stride
        self.register_buffer("anchor_vec", vec)
        self.register_buffer("anchor_wh", vec.view(1, self.na, 1, 1, 2))

    def forward(self, p):
        bs, _, ny, nx = p.shape
        p = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        if self.training:
            return p
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
        grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).to(p.dtype)
        io = p.clone()
        io[..., :2] = torch.sigmoid(io[..., :2]) + grid
        io[..., 2:4] = torch.exp(io[..., 2:4]) * self.anchor_wh
        io[..., :4] *= self.stride
        torch.sigmoid_(io[..., 4:])
        return io.view(bs, -1, self.no)


class Darknet(nn.Module):
    def __init__(self, cfg_text):
        super().__init__()
        blocks = parse_cfg(cfg_text)[1:]  # [net] holds darknet's own training settings
        self.module_list = nn.ModuleList()
        self.kinds, self.sources = [], []
        channels = [3]
        yolo_index = 0
        for i, b in enumerate(blocks):
            t = b["type"]
            src = []
            if t == "convolutional":
                bn = int(b.get("batch_normalize", "0"))
                k = int(b["size"])
                f = int(b["filters"])
                m = nn.Sequential()
                m.add_module("Conv2d", nn.Conv2d(channels[-1], f, k, int(b["stride"]),
                                                 k // 2 if int(b["pad"]) else 0, bias=not bn))
                if bn:
                    m.add_module("BatchNorm2d", nn.BatchNorm2d(f, momentum=0.03, eps=1e-4))
                if b["activation"] == "leaky":
                    m.add_module("activation", nn.LeakyReLU(0.1, inplace=True))
            elif t == "maxpool":
                k = int(b["size"])
                m, f = nn.MaxPool2d(k, int(b["stride"]), (k - 1) // 2), channels[-1]
            elif t == "upsample":
                m, f = nn.Upsample(scale_factor=int(b["stride"])), channels[-1]
            elif t == "route":
                src = [l if l >= 0 else i + l for l in ints(b["layers"])]
                m, f = nn.Identity(), sum(channels[s + 1] for s in src)
            elif t == "shortcut":
                src = [l if l >= 0 else i + l for l in ints(b["from"])]
                m, f = nn.Identity(), channels[-1]
            elif t == "yolo":
                a = ints(b["anchors"])
                pairs = [(a[2 * j], a[2 * j + 1]) for j in range(len(a) // 2)]
                m = Yolo([pairs[j] for j in ints(b["mask"])], int(b["classes"]), [32, 16, 8][yolo_index])
                yolo_index += 1
                f = channels[-1]
                with torch.no_grad():  # the "smart bias" init of the conv feeding it
                    bias = self.module_list[i - 1].Conv2d.bias.view(m.na, -1)
                    bias[:, 4] += -4.5
                    bias[:, 5:] += math.log(0.6 / (m.nc - 0.99))
            else:
                raise ValueError(t)
            self.module_list.append(m)
            self.kinds.append(t)
            self.sources.append(src)
            channels.append(f)

    def forward(self, x):
        out, yolo = [], []
        for m, t, src in zip(self.module_list, self.kinds, self.sources):
            if t == "route":
                x = torch.cat([out[s] for s in src], 1) if len(src) > 1 else out[src[0]]
            elif t == "shortcut":
                x = x + out[src[0]]
            elif t == "yolo":
                yolo.append(m(x))
            else:
                x = m(x)
            out.append(x)
        return yolo

    def yolo_layers(self):
        return [m for m in self.module_list if isinstance(m, Yolo)]


def wh_iou(wh1, wh2):
    wh1, wh2 = wh1[:, None], wh2[None]
    inter = torch.min(wh1, wh2).prod(2)
    return inter / (wh1.prod(2) + wh2.prod(2) - inter)


def giou(box1, box2):
    """GIoU of box1 (4 x n, xywh) and box2 (n x 4, xywh), elementwise."""
    box2 = box2.t()
    b1_x1, b1_x2 = box1[0] - box1[2] / 2, box1[0] + box1[2] / 2
    b1_y1, b1_y2 = box1[1] - box1[3] / 2, box1[1] + box1[3] / 2
    b2_x1, b2_x2 = box2[0] - box2[2] / 2, box2[0] + box2[2] / 2
    b2_y1, b2_y2 = box2[1] - box2[3] / 2, box2[1] + box2[3] / 2
    inter = (torch.min(b1_x2, b2_x2) - torch.max(b1_x1, b2_x1)).clamp(0) * \
            (torch.min(b1_y2, b2_y2) - torch.max(b1_y1, b2_y1)).clamp(0)
    w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1
    w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1
    union = (w1 * h1 + 1e-16) + w2 * h2 - inter
    iou = inter / union
    cw = torch.max(b1_x2, b2_x2) - torch.min(b1_x1, b2_x1)
    ch = torch.max(b1_y2, b2_y2) - torch.min(b1_y1, b2_y1)
    c_area = cw * ch + 1e-16
    return iou - (c_area - union) / c_area


def build_targets(p, targets, model):
    nt = targets.shape[0]
    out = []
    for pi, layer in zip(p, model.yolo_layers()):
        anchors = layer.anchor_vec
        gain = torch.ones(6, dtype=targets.dtype)
        gain[2:] = torch.tensor(pi.shape)[[3, 2, 3, 2]]
        na = anchors.shape[0]
        at = torch.arange(na).view(na, 1).repeat(1, nt)
        t = targets * gain
        j = wh_iou(anchors, t[:, 4:6]) > HYP["iou_t"]
        a, t = at[j], t.repeat(na, 1, 1)[j]
        b, c = t[:, :2].long().T
        gxy, gwh = t[:, 2:4], t[:, 4:6]
        gij = gxy.long()
        gi, gj = gij.T
        out.append((c, torch.cat((gxy - gij, gwh), 1), (b, a, gj, gi), anchors[a]))
    return out


def compute_loss(p, targets, model, gr):
    dt = p[0].dtype
    lcls, lbox, lobj = torch.zeros(1, dtype=dt), torch.zeros(1, dtype=dt), torch.zeros(1, dtype=dt)
    bce_cls = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([HYP["cls_pw"]], dtype=dt))
    bce_obj = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([HYP["obj_pw"]], dtype=dt))
    for pi, (tcls, tbox, (b, a, gj, gi), anch) in zip(p, build_targets(p, targets, model)):
        tobj = torch.zeros_like(pi[..., 0])
        nb = b.shape[0]
        if nb:
            ps = pi[b, a, gj, gi]
            pbox = torch.cat((ps[:, :2].sigmoid(), ps[:, 2:4].exp().clamp(max=1e3) * anch), 1)
            g = giou(pbox.t(), tbox)
            lbox += (1.0 - g).mean()
            tobj[b, a, gj, gi] = (1.0 - gr) + gr * g.detach().clamp(0).type(tobj.dtype)
            nc = ps.shape[1] - 5
            if nc > 1:
                t = torch.full_like(ps[:, 5:], 0.0)
                t[range(nb), tcls] = 1.0
                lcls += bce_cls(ps[:, 5:], t)
        lobj += bce_obj(pi[..., 4], tobj)
    lbox *= HYP["giou"]
    lobj *= HYP["obj"]
    lcls *= HYP["cls"]
    return lbox + lobj + lcls


def synthetic_targets(batch):
    """COCO-like labels (image, class, x, y, w, h), as models/vision/detection/yolov3.cc draws them."""
    rows = []
    for img in range(batch):
        k = int(torch.randint(2, 13, (1,)))
        cls = torch.randint(0, 80, (k,)).double()
        wh = torch.exp(torch.empty(k, 2, dtype=torch.float64).uniform_(math.log(0.02), math.log(0.6)))
        xy = wh / 2 + torch.rand(k, 2, dtype=torch.float64) * (1 - wh)
        rows.append(torch.cat((torch.full((k, 1), float(img), dtype=torch.float64), cls[:, None], xy, wh), 1))
    return torch.cat(rows, 0).float()


def xywh2xyxy(x):
    y = torch.zeros_like(x)
    y[:, 0] = x[:, 0] - x[:, 2] / 2
    y[:, 1] = x[:, 1] - x[:, 3] / 2
    y[:, 2] = x[:, 0] + x[:, 2] / 2
    y[:, 3] = x[:, 1] + x[:, 3] / 2
    return y


def box_iou(box1, box2):
    area1 = (box1[:, 2] - box1[:, 0]) * (box1[:, 3] - box1[:, 1])
    area2 = (box2[:, 2] - box2[:, 0]) * (box2[:, 3] - box2[:, 1])
    inter = (torch.min(box1[:, None, 2:], box2[:, 2:]) - torch.max(box1[:, None, :2], box2[:, :2])).clamp(0).prod(2)
    return inter / (area1[:, None] + area2 - inter)


def nms(prediction, conf_thres=0.3, iou_thres=0.6):
    """utils.non_max_suppression with multi_label False, no class filter, not agnostic, merge on."""
    min_wh, max_wh = 2, 4096
    rows = []
    for xi, x in enumerate(prediction):
        x = x[x[:, 4] > conf_thres]
        x = x[((x[:, 2:4] > min_wh) & (x[:, 2:4] < max_wh)).all(1)]
        if not x.shape[0]:
            continue
        x[..., 5:] *= x[..., 4:5]
        box = xywh2xyxy(x[:, :4])
        conf, j = x[:, 5:].max(1)
        x = torch.cat((box, conf.unsqueeze(1), j.to(x.dtype).unsqueeze(1)), 1)[conf > conf_thres]
        n = x.shape[0]
        if not n:
            continue
        c = x[:, 5]
        boxes, scores = x[:, :4].clone() + c.view(-1, 1) * max_wh, x[:, 4]
        i = torchvision.ops.boxes.nms(boxes, scores, iou_thres)
        if 1 < n < 3e3:
            iou = box_iou(boxes[i], boxes) > iou_thres
            weights = iou * scores[None]
            x[i, :4] = torch.mm(weights, x[:, :4]) / weights.sum(1, keepdim=True)
        kept = x[i]
        rows.append(torch.cat((torch.full((kept.shape[0], 1), float(xi), dtype=x.dtype), kept), 1))
    return torch.cat(rows, 0) if rows else torch.zeros(0, 7, dtype=prediction.dtype)


def nms_case():
    """A crafted prediction batch (2 images, 600 boxes, 80 classes) where many boxes pass."""
    g = torch.Generator().manual_seed(7)
    bs, n, nc = 2, 600, 80
    pred = torch.empty(bs, n, 5 + nc, dtype=torch.float64)
    centers = torch.rand(bs, 12, 2, generator=g) * 400 + 50
    pick = torch.randint(0, 12, (bs, n), generator=g)
    pred[..., :2] = torch.gather(centers, 1, pick[..., None].expand(bs, n, 2)) + torch.randn(bs, n, 2, generator=g) * 6
    pred[..., 2:4] = 1 + torch.rand(bs, n, 2, generator=g) * 120  # some below min_wh 2
    pred[..., 4] = torch.rand(bs, n, generator=g)
    pred[..., 5:] = torch.rand(bs, n, nc, generator=g) * 0.3
    cls = (pick % 5)[..., None]  # boxes around one centre share a few classes
    pred[..., 5:].scatter_(2, cls, 0.6 + 0.4 * torch.rand(bs, n, 1, generator=g, dtype=torch.float64))
    return pred


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cfg", help="the Darknet cfg text file (written by the C++ test)")
    parser.add_argument("--size", type=int, default=64, help="square image side")
    parser.add_argument("--double", action="store_true")
    args = parser.parse_args()
    if args.model == "yolov3_nms":
        pred = nms_case()
        torch.save({"params": {}, "param_count": 0, "inputs": {"pred": pred}, "output": nms(pred.clone()),
                    "loss": torch.zeros(1), "updated": {}}, args.out)
        return

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    with open(args.cfg) as f:
        model = Darknet(f.read())
    batch = 2
    inputs = {"images": torch.randint(0, 256, (batch, 3, args.size, args.size), dtype=torch.uint8),
              "targets": synthetic_targets(batch)}
    dt = torch.float32
    if args.double:
        model.double()
        dt = torch.float64
        inputs["targets"] = inputs["targets"].double()
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def forward(m):
        p = m(inputs["images"].to(dt) / 255.0)
        return p if m.training else torch.cat(p, 1)

    model.eval()
    with torch.no_grad():
        output = forward(model).clone()

    model.train()
    torch.manual_seed(TRAIN_SEED)
    groups = {"other": [], "conv": [], "bias": []}
    for k, v in model.named_parameters():
        groups["bias" if ".bias" in k else "conv" if "Conv2d.weight" in k else "other"].append(v)
    opt = torch.optim.SGD([{"params": groups["other"], "lr": 0.0}, {"params": groups["conv"], "lr": 0.0},
                           {"params": groups["bias"], "lr": 0.1}], lr=0.0, momentum=0.9, nesterov=True)
    loss = compute_loss(forward(model), inputs["targets"], model, gr=0.0)
    loss *= batch / 64
    loss.backward()
    opt.step()
    opt.zero_grad()
    updated = {k: v.detach().clone() for k, v in model.named_parameters()}
    torch.save({"params": params, "param_count": sum(p.numel() for p in model.parameters()), "inputs": inputs,
                "output": output, "loss": loss.detach().clone(), "updated": updated}, args.out)


if __name__ == "__main__":
    main()
