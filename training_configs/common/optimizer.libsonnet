// The optimizer parameter groups of every model of this library, for `trainer.optimizer.parameter_groups`.
//
// Every model keeps its encoder in the attribute `encoder`, so the names of all encoder parameters start with
// `encoder.` and everything else is the task head. The groups:
//   1. encoder biases and LayerNorm weights:  lr encoder_lr, no weight decay
//   2. the other encoder parameters:          lr encoder_lr, weight decay `weight_decay`
//   3. head biases and LayerNorm weights:     the optimizer's lr, no weight decay
//   (allennlp's default group) the other head parameters: the optimizer's own lr and weight_decay.
// encoder_lr / weight_decay null (the default): the optimizer's own, so that one learning rate for everything
// stays one setting (`-o '{"trainer.optimizer.lr": ...}'` changes all of it). Use:
//   local optimizer = import "../common/optimizer.libsonnet";
//   optimizer: { type: "huggingface_adamw", lr: HEAD_LR, weight_decay: WD,
//                parameter_groups: optimizer.parameter_groups(ENCODER_LR) },
// `new_encoder_modules` names submodules of the encoder (relative to `encoder.`) that are freshly initialised,
// e.g. ["entity_embeddings"] of an entity-aware encoder: they train as the head does (lr and weight decay).
// tests/test_parameter_groups.py builds every shipped config and checks where each parameter lands.

// LayerNorm weights are `LayerNorm` (Hugging Face), `layer_norm` (this library) or `norm1` / `norm2` (the span
// boundary head).
local no_decay = "(bias|LayerNorm\\.weight|layer_norm\\.weight|norm1\\.weight|norm2\\.weight)$";

// `settings` without its null values (an option left out of a group is the optimizer's own).
local given(settings) = { [key]: settings[key] for key in std.objectFields(settings) if settings[key] != null };

{
  no_decay:: no_decay,

  parameter_groups(encoder_lr=null, weight_decay=null, new_encoder_modules=[])::
    local pretrained =
      "encoder\\." + (if std.length(new_encoder_modules) == 0 then ""
                      else "(?!(" + std.join("|", new_encoder_modules) + ")\\.)");
    [
      [["^" + pretrained + ".*" + no_decay], given({ lr: encoder_lr, weight_decay: 0.0 })],
      [["^" + pretrained + "(?!.*" + no_decay + ")"], given({ lr: encoder_lr, weight_decay: weight_decay })],
      [["^(?!" + pretrained + ").*" + no_decay], { weight_decay: 0.0 }],
    ],

  // For models of other packages, whose encoder is not the attribute `encoder` (allennlp's `basic_classifier`
  // has its own attribute names), trained with one learning rate: no weight decay on biases and LayerNorm
  // weights, the optimizer's lr and weight_decay for everything else.
  no_decay_groups():: [[[no_decay], { weight_decay: 0.0 }]],
}
