"""The operators of the standard ONNX domains (``ai.onnx`` and ``ai.onnx.ml``), by name.

Reference data for :mod:`rca.suggestion.platform_facts`: a node whose operator is not one
of these (and has no standard domain) is a custom operator, which no opset change or
execution provider implements. Taken from the ONNX operator documentation
(https://onnx.ai/onnx/operators/ and https://github.com/onnx/onnx/blob/main/docs/Operators.md,
https://github.com/onnx/onnx/blob/main/docs/Operators-ml.md), up to opset 24; a newer
standard operator missing here reads as custom only when the runtime also says it is not
registered, so the list errs towards the older runtime's view.
"""

from __future__ import annotations

__all__ = ["ML_OPERATORS", "STANDARD_DOMAINS", "STANDARD_OPERATORS"]

STANDARD_DOMAINS: frozenset[str] = frozenset({"", "ai.onnx", "ai.onnx.ml"})

_AI_ONNX = """
Abs Acos Acosh Add AffineGrid And ArgMax ArgMin Asin Asinh Atan Atanh Attention AveragePool
BatchNormalization Bernoulli BitCast BitShift BitwiseAnd BitwiseNot BitwiseOr BitwiseXor
BlackmanWindow Cast CastLike Ceil Celu CenterCropPad Clip Col2Im Compress Concat
ConcatFromSequence Constant ConstantOfShape Conv ConvInteger ConvTranspose Cos Cosh CumSum
DFT DeformConv DepthToSpace DequantizeLinear Det Div Dropout DynamicQuantizeLinear Einsum Elu
Equal Erf Exp Expand EyeLike Flatten Floor GRU Gather GatherElements GatherND Gelu Gemm
GlobalAveragePool GlobalLpPool GlobalMaxPool Greater GreaterOrEqual GridSample
GroupNormalization HammingWindow HannWindow HardSigmoid HardSwish Hardmax Identity If
ImageDecoder InstanceNormalization IsInf IsNaN LRN LSTM LayerNormalization LeakyRelu Less
LessOrEqual Log LogSoftmax Loop LpNormalization LpPool MatMul MatMulInteger Max MaxPool
MaxRoiPool MaxUnpool Mean MeanVarianceNormalization MelWeightMatrix Min Mish Mod Mul
Multinomial Neg NegativeLogLikelihoodLoss NonMaxSuppression NonZero Not OneHot Optional
OptionalGetElement OptionalHasElement Or PRelu Pad Pow QLinearConv QLinearMatMul
QuantizeLinear RMSNormalization RNN RandomNormal RandomNormalLike RandomUniform
RandomUniformLike Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax
ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare RegexFullMatch Relu Reshape Resize
ReverseSequence RoiAlign RotaryEmbedding Round STFT Scan Scatter ScatterElements ScatterND
Selu SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert SequenceLength
SequenceMap Shape Shrink Sigmoid Sign Sin Sinh Size Slice Softmax SoftmaxCrossEntropyLoss
Softplus Softsign SpaceToDepth Split SplitToSequence Sqrt Squeeze StringConcat
StringNormalizer StringSplit Sub Sum Swish Tan Tanh TensorScatter TfIdfVectorizer
ThresholdedRelu Tile TopK Transpose Trilu Unique Unsqueeze Upsample Where Xor
"""

_AI_ONNX_ML = """
ArrayFeatureExtractor Binarizer CastMap CategoryMapper DictVectorizer FeatureVectorizer
Imputer LabelEncoder LinearClassifier LinearRegressor Normalizer OneHotEncoder SVMClassifier
SVMRegressor Scaler TreeEnsemble TreeEnsembleClassifier TreeEnsembleRegressor ZipMap
"""

STANDARD_OPERATORS: frozenset[str] = frozenset((_AI_ONNX + _AI_ONNX_ML).split())
#: The ``ai.onnx.ml`` operators, versioned by the ML opset.
ML_OPERATORS: frozenset[str] = frozenset(_AI_ONNX_ML.split())
