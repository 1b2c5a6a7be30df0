# KServe Hugging Face runtime (vLLM backend)
cat <<'EOF' > isvc.yaml
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: huggingface-llama3
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      args:
        - --model_name=llama3
        - --model_id=meta-llama/Meta-Llama-3-8B-Instruct
        - --max_model_len=4096
        - --dtype=bfloat16
      resources:
        limits:
          cpu: "6"
          memory: 24Gi
          nvidia.com/gpu: "1"
EOF
kubectl apply -f isvc.yaml
